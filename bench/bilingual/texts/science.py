"""Concepts/: the lake's animals, plants, physics and the measures we take. Some are written
up in English (for Leith), some in Russian, none in both."""

from __future__ import annotations

from .common import note

CONCEPTS = [
    note(
        "Concepts",
        "Epischura baikalensis",
        "en",
        """
An endemic copepod, about one and a half millimetres long, and the most important animal in the
lake that nobody has heard of. It makes up most of the zooplankton biomass in open water, up to
nine tenths of it in some years, and by eating algae and bacteria it filters the upper water
column over and over. A good part of Baikal's famous clarity is its work.

## Why we track it

- It is cold-water adapted; warm summers near the shore push it down and away, and coastal
  species that tolerate warmth take its place.
- The [[Омуль|omul]] feeds on it, so a bad year for *Epischura* is a bad year for the fish.
- Counting it is slow: each sample is sorted by hand under a microscope.

Natalya counted it at [[Bolshiye Koty]] as a student, and her numbers from the 1980s are our
baseline. In Russian it is simply эпишура.

See also [[Secchi depth]], which tracks the clarity it helps to keep.
""",
        aliases=["Epischura", "эпишура"],
        tags=["concepts", "zooplankton", "endemic"],
    ),
    note(
        "Concepts",
        "Нерпа",
        "ru",
        """
Байкальская нерпа, *Pusa sibirica* — единственный в мире тюлень, который живёт только в пресной
воде. Как она попала в Байкал, до сих пор спорят: скорее всего, по рекам с севера, из Ледовитого
океана, во время одного из оледенений.

## Жизнь по сезонам

Зимой нерпа держит во льду продухи — лунки для дыхания, которые скребёт когтями. В конце
февраля и в марте самки приносят бельков в снежных логовах на льду; детёныш первые недели
почти не виден снаружи. Поэтому поздний лёд и тонкий снег — плохая новость для нерпы.

Летом нерпы выходят на камни, больше всего на [[Ushkany Islands|Ушканьих островах]]; там стоят
наши камеры, см. [[Нерпа-камера]].

## Что едят

В основном голомянку и бычков, [[Омуль|омуля]] гораздо меньше, чем думают рыбаки.

Латинское и английское: Baikal seal, nerpa.
""",
        aliases=["Baikal seal", "Pusa sibirica", "nerpa"],
        tags=["concepts", "endemic", "seals"],
    ),
    note(
        "Concepts",
        "Омуль",
        "ru",
        """
Байкальский омуль, *Coregonus migratorius* — эндемичная рыба из сиговых, символ Байкала и
главная рыба на рынках вдоль берега. Нерестится в реках: Селенге, Баргузине, Верхней Ангаре,
осенью поднимается вверх по течению.

С октября 2017 года промышленный вылов омуля запрещён: запасы упали в несколько раз. Причины
называют разные — перелов, браконьерство, изменения в кормовой базе. Кормовая база — это прежде
всего [[Epischura baikalensis|эпишура]], и здесь наш мониторинг зоопланктона становится
важен не только для науки.

То, что продают в Листвянке под видом омуля, обычно другая рыба или браконьерский улов.
Гостям из Leith я объясняю это до того, как они дойдут до рынка.

По-английски omul, иногда Baikal omul. В детстве дома его солили с душком — рецепт у бабушки
был свой, но я его не записала, а теперь его и готовить не из чего.
""",
        aliases=["Omul", "Baikal omul", "Coregonus migratorius"],
        tags=["concepts", "endemic", "fish"],
    ),
    note(
        "Concepts",
        "Spirogyra blooms",
        "en",
        """
Since about 2011 the stony shallows near settlements have been overgrown by filamentous green
algae, mostly *Spirogyra*. In late summer the stones near [[Листвянка|Listvyanka]] are covered
in green slimy mats, which then rot on the beach in autumn. The endemic sponges in the same
places are sick or dying.

## What drives it

Nutrients from sewage, above all phosphorus: villages and hotels grew faster than treatment
plants. The pattern is local — thick near villages, absent at reference sites like
[[Bolshiye Koty]] — which is what points at sewage rather than at the lake as a whole. See
[[Эвтрофикация]] for the wider picture.

## How we measure it

Percentage cover of the stones in photo quadrats, taken by a diver at 1, 3 and 5 metres at
each station, in June and in September. [[Ольга Щербакова|Olga]] identifies the species from
scraped samples.

Ugly to look at, easy to explain to visitors, and the reason the local council finally answers
our letters.
""",
        aliases=["Спирогира", "нитчатка"],
        tags=["concepts", "algae", "pollution"],
    ),
    note(
        "Concepts",
        "Ледовый покров",
        "ru",
        """
Байкал замерзает поздно: южная котловина обычно в январе, северная раньше. Лёд держится до мая,
а у Листвянки, где Ангара не даёт воде застыть, кромка отходит раньше всего.

Толщина льда к марту — от семидесяти сантиметров до метра с лишним. Он прозрачный там, где ветер
сдул снег, и тогда сквозь него видно дно на десяти метрах. Трещины — становые щели — появляются
каждый год в одних и тех же местах и расходятся на метры; по ним ориентируемся, где ставить
лунки (подробно — [[Безопасность на льду]]).

Что меняется: за последние десятилетия ледовый сезон стал короче, лёд встаёт позже. Для
[[Нерпа|нерпы]] это вопрос выживания детёнышей, для подлёдного планктона — вопрос света. Поэтому
в [[Проект Подлёдный|Подлёдном]] мы каждую зиму меряем толщину льда и снега в каждой точке.

По-английски для Leith: ice cover, ice season; Фиона просит даты ледостава и вскрытия по
каждому году.
""",
        aliases=["Ice cover", "ice season"],
        tags=["concepts", "ice"],
    ),
    note(
        "Concepts",
        "Secchi depth",
        "en",
        """
The simplest measurement in limnology: lower a white disc, 30 cm across, on a marked rope and
note the depth at which it disappears. In Baikal this can be forty metres in spring, which still
amazes every visitor; near the shore in August it is often under ten.

## How we do it

- Shaded side of the boat, no sunglasses, between 10:00 and 14:00.
- Two people read it independently; we record both.
- One reading per station per visit, with the time and the state of the surface.

## Why it still matters

It is cheap, has been measured on Baikal for decades and integrates everything that makes water
cloudy: algae, silt, plankton. It goes down when [[Chlorophyll a|chlorophyll]] goes up, but not
always, and the gaps are interesting.

In the 2025 comparison between disc readings and the profiler's fluorometer, the fluorometer had
drifted by a third over the summer; [[Ольга Щербакова]] recalibrated it against her extracted
chlorophyll. In Russian the disc is диск Секки.
""",
        aliases=["Глубина Секки", "Secchi disc"],
        tags=["concepts", "measurements"],
    ),
    note(
        "Concepts",
        "Эвтрофикация",
        "ru",
        """
Эвтрофикация — это когда в водоём попадает больше биогенных элементов, прежде всего фосфора и
азота, чем он может переработать, и начинается избыточный рост водорослей. Для огромного и
бедного питательными веществами Байкала это не про всё озеро, а про прибрежную полосу возле
посёлков.

Источники у нас понятны: стоки гостиниц и домов без нормальной канализации, смыв с
турбаз, моющие средства с фосфатами. Видимый результат — [[Spirogyra blooms|нитчатка]] на камнях,
невидимый — сдвиг в составе фитопланктона и болезни губок.

Анализы на фосфаты и нитраты делаем сами или отправляем [[Баир Цыдыпов|Баиру]] в Улан-Удэ.
Самая наглядная цифра, которую я показываю на встречах с администрацией: летом фосфор у пирса
в Листвянке в три раза выше, чем у Больших Котов.

Англоязычный термин — eutrophication; в отчётах для Leith это раздел «nutrient loading».
""",
        aliases=["Eutrophication"],
        tags=["concepts", "pollution"],
    ),
    note(
        "Concepts",
        "Chlorophyll a",
        "en",
        """
The green pigment every alga carries, so its concentration is the standard proxy for how much
phytoplankton is in the water. We measure it in two ways.

1. **Extracted**: filter a litre of water, extract the pigment in acetone, read it in the
   spectrophotometer. Slow, accurate; done in Irkutsk by [[Ольга Щербакова|Olga]]'s group.
2. **In situ**: the fluorometer on the profiler gives a continuous profile, fast but needing
   calibration against the extracted values every season.

Open Baikal water is poor in chlorophyll, often under one microgram per litre; readings of
several micrograms near the shore in August are a sign of nutrient input
([[Эвтрофикация]]).

Chlorophyll and [[Secchi depth]] usually move in opposite directions. When they do not, the
cause is usually silt after rain, not algae.
""",
        aliases=["Хлорофилл", "chlorophyll"],
        tags=["concepts", "measurements"],
    ),
    note(
        "Concepts",
        "Сарма",
        "ru",
        """
Сарма — самый сильный ветер на Байкале. Дует с северо-запада, из долины реки Сармы, в Малое Море
у [[Ольхон|Ольхона]]. Налетает внезапно, за несколько минут, порывы бывают до сорока метров в
секунду, волна поднимается такая, что в старые времена переворачивала рыбацкие лодки.

У Листвянки её нет, но зато там свои ветры — култук с юго-запада и баргузин с востока, и у
каждого свой нрав.

Случай, который помнят все: в сентябре 2024 года, когда мы ездили на Ольхон на семинар, сарма
сорвала с якоря наш катер «Омулёвка», стоявший у Хужира, и понесла к скалам. Катер спас
[[Илья Громов]] — ушёл за ним на моторке знакомого рыбака и вернул к берегу, не дав разбиться.
С тех пор на выездах мы ставим катер только в бухте и на два якоря.

Для англоязычных отчётов: sarma wind, northwesterly gale.
""",
        aliases=["Sarma", "Sarma wind"],
        tags=["concepts", "weather"],
    ),
    note(
        "Concepts",
        "Upwelling",
        "en",
        """
When wind pushes warm surface water away from the shore, cold deep water rises to replace it.
On Baikal this happens within hours: a shore station reads 16 °C in the morning and 6 °C by
evening, with nothing changed but the wind.

## Why it matters to us

- It flushes the coastal zone, diluting whatever nutrients the shore has added.
- It brings deep-water plankton into the shallows and confuses any count taken that day.
- It can make one station look cleaner than its neighbour for reasons that have nothing to do
  with pollution.

So every temperature profile gets flagged if the surface temperature fell by more than 5 °C
since the previous day. [[Ewan Reid|Ewan]] is building a model to tell upwelling from other
cooling, using the wind record from the station mast.

Related winds: [[Сарма]] blows in the north, but the winds that matter at Listvyanka are the
kultuk and the barguzin.
""",
        aliases=["Апвеллинг"],
        tags=["concepts", "physics"],
    ),
]
