"""Life/, Reading/, Journal/, Inbox/ and the two hubs (Home, Люди). Personal notes are
mostly in Russian; a few in English, written for or after visitors."""

from __future__ import annotations

from .common import note

LIFE = [
    note(
        "Life",
        "Trans-Siberian trip 2024",
        "en",
        """
In May 2024 I came back from a meeting in [[Москва|Moscow]] by train instead of flying:
5,185 km to Irkutsk in four nights, second class, a compartment shared with a retired engineer
from Omsk and, for one night, a very quiet soldier.

## What it was like

- The first day is all birches. So is the second. On the third the Urals are already behind and
  the birches have become larger.
- Hot water from the samovar at the end of the carriage, noodles, boiled eggs, tea in glass
  holders that the attendant rents out.
- Long stops at Yekaterinburg, Novosibirsk and Krasnoyarsk: twenty minutes to buy pies on the
  platform and walk.

## Would I do it again

Yes, once more, in autumn. Four days of no internet did more for the grant report than a month
in the office. But the last night before Irkutsk I could not sleep for wanting to see the lake
again.

Compare the much shorter and prettier [[Кругобайкальская железная дорога]].
""",
        aliases=["Транссиб 2024"],
        tags=["travel", "train"],
    ),
    note(
        "Life",
        "Кругобайкальская железная дорога",
        "ru",
        """
Старая железная дорога вдоль южного берега Байкала, от Слюдянки до порта Байкал. Построена в
начале XX века как часть Транссиба, потом основной путь ушёл через перевал, а эта ветка осталась —
тридцать девять тоннелей, больше двухсот мостов и подпорные стенки из тёсаного камня.

Ездили в июле 2025 года с [[Ewan Reid|Юэном]] и двумя студентами на туристическом поезде из
Слюдянки: весь день, с остановками, чтобы искупаться и пройти пешком через тоннели.

Что понравилось:
- итальянская стенка — кладка, которую делали итальянские каменщики;
- тоннель у мыса Половинного, где из окна вагона видно только воду;
- пикник на берегу, омулёвые пироги, правда, без омуля.

Что нет: поезд идёт очень медленно, к вечеру все устали, а в порту Байкал паром до Листвянки ждали
час.

Для сравнения: [[Trans-Siberian trip 2024]] — четыре дня и пять тысяч километров. Здесь
восемьдесят девять километров, но впечатлений не меньше.
""",
        aliases=["Circum-Baikal Railway"],
        tags=["travel", "train"],
    ),
    note(
        "Life",
        "Позы",
        "ru",
        """
Бурятские позы (буузы) — большие пельмени на пару с дырочкой сверху, через которую видно фарш.
Рецепт мне продиктовала хозяйка кафе в [[Улан-Удэ]], куда меня водит [[Баир Цыдыпов|Баир]].

## Тесто

500 г муки, 250 мл холодной воды, щепотка соли. Замесить крутое тесто, полчаса под плёнкой.

## Фарш

- 500 г баранины и 500 г говядины, рубить ножом, не через мясорубку;
- две большие луковицы, мелко;
- соль, перец, 100 мл холодной воды — фарш должен быть сочным.

## Лепка и варка

Кружок теста, ложка фарша, защипывать по кругу складками, оставляя сверху дырочку. Двадцать
минут на пару. Есть руками: сначала прокусить край и выпить бульон, потом всё остальное.

Получается штук тридцать. [[Fiona MacLeod|Фиона]] съела семь и попросила рецепт по-английски — пока
не перевела.
""",
        aliases=["Буузы", "Buuzy"],
        tags=["recipe"],
    ),
    note(
        "Life",
        "Баня",
        "ru",
        """
Баня на станции — маленький сруб у самой воды, который построил ещё прежний завхоз. Топит
всегда [[Пётр Ёлкин|Петя]], никому не доверяет.

Порядок у нас такой: в пятницу вечером, после недельного выхода, сначала парилка, потом — прямо с
мостков в Байкал. Летом вода у берега восемь-десять градусов, и этого хватает, чтобы выбить из
головы всю неделю. Зимой Илья прорубает у мостков прорубь.

Веники берёзовые, заготавливаем в июле. Для гостей из Эдинбурга есть отдельные правила: не
сидеть на верхней полке дольше пяти минут и не нырать в прорубь без Ильи.

[[Ewan Reid|Юэн]] после первой бани сказал, что теперь понимает русскую литературу. Думаю, он
преувеличил.
""",
        aliases=["Banya"],
        tags=["life", "station"],
    ),
    note(
        "Life",
        "Skating on Baikal ice",
        "en",
        """
The best thing about winter here, better even than the silence. When the lake freezes without
snow, as it did in January 2025, the ice near the shore is clear and black and you can skate for
kilometres over water three hundred metres deep and see the stones on the bottom in the
shallows.

## How

- Only with people who know the ice, and only where the [[Ice safety]] rules allow; the cracks
  that open every year are marked.
- Long Nordic skates, not hockey skates: the ice is never smooth.
- Ice picks round the neck, always, and a rope in someone's backpack.

## Best days

Windless, minus fifteen, sun low in the south. The ice sings: long booming and cracking sounds
as it contracts in the cold. The first time it frightened me half to death; now I wait for it.

[[Ewan Reid|Ewan]] wants to come back in winter just for this.
""",
        aliases=["Коньки на Байкале"],
        tags=["life", "ice"],
    ),
]

READING = [
    note(
        "Reading",
        "Братья Карамазовы",
        "ru",
        """
Перечитала зимой 2025 года, в третий раз, и впервые дочитала главу «Великий инквизитор», не
пропуская. Читала по вечерам на станции, когда из-за льда не было выходов.

Что заметила в этот раз:
- Иван мне теперь ближе, чем Алёша, и от этого неуютно;
- суд в конце — самая современная часть: экспертиза, адвокат, присяжные, и никто не знает правды;
- у Достоевского все говорят длинными монологами, но каждый — своим голосом.

Любимая фраза осталась прежней: про клейкие весенние листочки.

Порекомендовала [[Ewan Reid|Юэну]] английский перевод; он сказал, что начнёт после
[[Silent Spring]], которую я, в свою очередь, обещала ему дочитать.
""",
        aliases=["The Brothers Karamazov"],
        tags=["reading", "books"],
    ),
    note(
        "Reading",
        "Silent Spring",
        "en",
        """
Rachel Carson, 1962. I read it in English on the advice of [[Ewan Reid|Ewan]], who was shocked
that I had only ever read about it.

## What stays with me

- The opening fable of a town where the birds have stopped singing: written for people who will
  never read a paper.
- The patience of it: chapter after chapter of evidence, organism by organism, before any
  conclusion.
- How little the arguments against her have changed since: the same "no proof", "too
  expensive", "the economy".

## For our work

Carson showed that the way to make people care about a slow, invisible change is to make it
visible in one place they know. That is what the green slime on the stones at Listvyanka does
for [[Эвтрофикация|nutrient pollution]]: nobody reads phosphate tables, everybody sees the
[[Spirogyra blooms]].

In return I gave Ewan [[Братья Карамазовы]].
""",
        aliases=["Безмолвная весна"],
        tags=["reading", "books"],
    ),
]

JOURNAL = [
    note(
        "Journal",
        "2025-02-14",
        "ru",
        """
Лёд у станции наконец надёжный: Илья с утра прошёл трассу с пешнёй и разрешил. Первый выход
[[Проект Подлёдный|Подлёдного]] в этом году — на две недели позже плана. Сделали обе точки,
толщина льда 68 и 74 см, снега почти нет.

Вечером баня, потом звонила мама, спрашивала, когда приеду в Москву. Сказала — в апреле, на
отчёт.

Прочитала ещё сто страниц Карамазовых. Иван опять прав, и опять это не помогает.

Холодно: минус двадцать шесть. Петя говорит, что генератор такого не любит, и всю ночь будет
к нему выходить.
""",
        date="2025-02-14",
        tags=["journal"],
    ),
    note(
        "Journal",
        "2025-07-30",
        "en",
        """
Writing in English tonight because Ewan asked to read about "a normal day" for his blog.

Up at six. Weekly stations L1 to L4 with Ilya: calm morning, Secchi disc at nine metres at L2,
which for the end of July is not bad. At L4 the surface was suddenly 7 °C — cold water up from
below after last night's wind. Ewan was delighted; it is exactly what his model wants.

Afternoon: filtering chlorophyll, labelling, packing the Lugol samples for the evening bus to
Irkutsk so that they reach Olga today.

Evening: swim off the pier, which at 7 °C lasted four seconds. Dinner at the café in the
village. The tourists were buying "omul" at the market again; I explained to Ewan, again, why it
cannot be omul.
""",
        date="2025-07-30",
        tags=["journal"],
    ),
    note(
        "Journal",
        "2025-12-03",
        "ru",
        """
Вернулась из Эдинбурга. Две недели дождя, два семинара, одна ночь в библиотеке, чтобы доделать
карту станций для отчёта Фионы.

Поняла, что соскучилась не по людям даже, а по тишине на станции и по воде, которая видна на
сорок метров вниз.

Дома минус восемнадцать, Ангара парит. Байкал у Листвянки ещё открыт, ледостава ждём к
середине января. Подлёдный сезон теперь в марте — впервые за несколько лет февраль свободен.

Записать на завтра: заказать пропуск в фонд на апрель, проверить, пришли ли анализы от Баира.
""",
        date="2025-12-03",
        tags=["journal"],
    ),
]

MAPS = [
    note(
        "",
        "Home",
        "en",
        """
# Home

My working notes: a limnologist at the Baikal Shore Lab in Irkutsk, working on the western
shore of Lake Baikal with the Leith Institute in Edinburgh. English for anything Leith reads,
Russian for the rest.

## Work

- [[Shoreline monitoring]] — the main project; [[Проект Подлёдный]] in winter;
  [[Microplastics survey]]; [[Нерпа-камера]]
- Guides: [[Sampling protocol]] / [[Протокол отбора проб]], [[Ice safety]] /
  [[Безопасность на льду]], [[CTD maintenance]] / [[Обслуживание CTD-зонда]],
  [[Data upload]] / [[Загрузка данных]]
- Meetings: [[2025-11-10 Call with Leith]], [[2025-09-02 Планёрка на станции]]
- People: [[Люди]]

## The lake

[[Epischura baikalensis]], [[Нерпа]], [[Омуль]], [[Ледовый покров]], [[Сарма]], [[Upwelling]],
[[Spirogyra blooms]]

## Places

[[Листвянка]], [[Bolshiye Koty]], [[Иркутск]], [[Ольхон]], [[Ushkany Islands]]
""",
        tags=["hub"],
    ),
    note(
        "Maps",
        "Люди",
        "ru",
        """
# Люди

Все, с кем работаю, одним списком.

## Лаборатория и станция

- [[Наталья Сорокина]] — заведующая, мой руководитель
- [[Пётр Ёлкин]] — инженер станции, всё железо
- [[Илья Громов]] — катер, водолаз, лёд
- [[Ольга Щербакова]] — фитопланктон и хлорофилл

## Партнёры

- [[Баир Цыдыпов]] — гидрохимия, Улан-Удэ
- [[Fiona MacLeod]] — руководитель с британской стороны, Leith
- [[Ewan Reid]] — моделирование, Leith

Кто кому пишет: Фиона — Наталье Алексеевне, Юэн — мне и Пете, Баир — Ольге. Дни рождения и
телефоны — в записной книжке, не здесь.
""",
        aliases=["People directory"],
        tags=["hub"],
    ),
]

INBOX = [
    note(
        "Inbox",
        "Идеи для статьи",
        "ru",
        """
Черновые мысли для статьи в научно-популярный журнал, пока без плана.

- Начать с того, как выглядит берег в августе: зелёная слизь на камнях, запах, мёртвые губки.
  Потом — сравнение с тем же берегом двадцать лет назад по фотографиям из архива.
- Объяснить, почему «самое чистое озеро» и «грязный берег» — не противоречие: огромная
  открытая вода и узкая полоска у посёлков живут разной жизнью.
- Отдельный абзац про то, что люди могут сделать сами: моющие средства без фосфатов,
  не покупать «омуля» на рынке.
- Закончить зимой: прозрачный лёд, пение льда, тишина.

Не забыть попросить у редакции, чтобы фотографии подписывали с именами тех, кто снимал.
""",
        tags=["inbox", "writing"],
    ),
    note(
        "Inbox",
        "Packing list for the field",
        "en",
        """
For a week at the station in summer. Visitors get a copy before they fly.

Clothes: thermal underwear even in July, a fleece, a proper waterproof jacket and trousers,
rubber boots, a warm hat for the boat, sunglasses, swimming things (optional, honestly).

Work: head torch, notebook and pencils (pens freeze in winter and smear in the wet), a dry
bag for the phone, nitrile gloves, personal medicine for a week.

Documents: passport, the station's invitation letter, insurance that covers boat work.

Winter additions: felt boots or insulated boots rated to minus forty, mittens over gloves,
a face mask against the wind, and ice picks — though the station has spares.

Not needed: a hair dryer (the generator will not thank you), anything white.
""",
        tags=["inbox", "field"],
    ),
]
