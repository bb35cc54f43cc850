"""Places/: the station, the towns, the islands. Russian places are written up in Russian,
with the Latin transliterations as aliases; Edinburgh and two field sites in English."""

from __future__ import annotations

from .common import note

PLACES = [
    note(
        "Places",
        "Листвянка",
        "ru",
        """
Посёлок на западном берегу Байкала, у истока Ангары, в семидесяти километрах от Иркутска.
Здесь наша станция: два деревянных дома на склоне, лодочный сарай и пирс, который каждую весну
чинит [[Пётр Ёлкин|Петя]].

## Как добраться

Из [[Иркутск|Иркутска]] — маршрутка от центрального рынка, час с небольшим. Зимой, если
дорогу замело, лучше ехать утром. Летом по выходным пробки на въезде в посёлок.

## Что рядом

- точки отбора проб L1–L4 вдоль берега, от пирса до устья пади Крестовой;
- Байкальский музей, куда мы водим гостей из Leith;
- рынок у причала, где продают копчёную рыбу (омуля среди неё быть не должно: промысел
  [[Омуль|омуля]] запрещён с 2017 года).

## Почему именно здесь

Посёлок растёт, гостиниц всё больше, а очистных сооружений всё так же не хватает. Для
мониторинга прибрежной зоны это худшее и поэтому самое нужное место: именно у Листвянки
[[Spirogyra blooms|нитчатка]] появилась одной из первых.
""",
        aliases=["Listvyanka", "Listvianka"],
        tags=["places", "station"],
    ),
    note(
        "Places",
        "Иркутск",
        "ru",
        """
Город, где институт и лаборатория; на станцию отсюда час езды. Я живу на улице Карла Маркса,
в пятнадцати минутах пешком от работы.

В Иркутске: кабинет [[Наталья Сорокина|Натальи Алексеевны]], микроскопная
[[Ольга Щербакова|Ольги]], сервер лаборатории (см. [[Решение 2025-01 — данные на сервере лаборатории]])
и склад, где зимуют лодочные моторы.

Аэропорт рядом с центром — гостей из Эдинбурга встречаю сама, рейсы из Москвы прилетают рано
утром. Поезд из Москвы идёт четверо суток, об этом — [[Trans-Siberian trip 2024]].

Любимые места: набережная Ангары в сентябре, 130-й квартал для гостей, рынок за хлебом и
облепихой.
""",
        aliases=["Irkutsk"],
        tags=["places"],
    ),
    note(
        "Places",
        "Москва",
        "ru",
        """
Бываю в Москве два-три раза в год, почти всегда по делам: защита отчёта по гранту, конференция
или встреча в фонде. В латинице в билетах она Moskva, на английских визах Moscow — коллеги из
Leith долго не понимали, что это один и тот же город.

В 2024 году впервые поехала отсюда в Иркутск поездом, а не самолётом; это было длинно, но
правильно — [[Trans-Siberian trip 2024]].

Где останавливаюсь: у подруги на Соколе, если она в городе, иначе в гостинице у Курского
вокзала. Из обязательного — Третьяковка и книжный на Тверской.

Заметка себе: в фонде на Ленинском проспекте пропуск заказывают за три рабочих дня, паспорт
нужен тот же, что указан в заявке.
""",
        aliases=["Moskva", "Moscow"],
        tags=["places", "travel"],
    ),
    note(
        "Places",
        "Ольхон",
        "ru",
        """
Самый большой остров Байкала, в Малом Море. Посёлок Хужир, мыс Бурхан с Шаманской скалой,
степь, сосны и вечный ветер. Сюда ездим не по работе, а на школу-семинар раз в два года и
просто так, в сентябре, когда туристы уезжают.

Как добраться: паром из Сахюрты летом, зимой — ледовая переправа, а в межсезонье, когда лёд уже
не держит, а паром ещё не ходит, остров отрезан. Этим Ольхон отличается от всего остального
побережья.

На Ольхоне я впервые увидела [[Сарма|сарму]] в полную силу: автобус с туристами разворачивало
на дороге.

Где ночевать: у тёти Даримы в Хужире, комнаты над кухней, завтрак в восемь. Знакомство через
[[Баир Цыдыпов|Баира]].
""",
        aliases=["Olkhon", "Olkhon Island"],
        tags=["places", "travel"],
    ),
    note(
        "Places",
        "Улан-Удэ",
        "ru",
        """
Столица Бурятии, на другой стороне Байкала. Отсюда к нам приходят анализы
[[Баир Цыдыпов|Баира]], и сюда же я езжу раз в год на совместный семинар.

Поезд из Иркутска — около семи часов, вдоль южного берега Байкала: одна из самых красивых
дорог, которые я знаю. На самолёте быстрее, но смысла нет.

Что запомнилось:
- огромная голова Ленина на площади Советов;
- Иволгинский дацан в получасе от города;
- [[Позы|позы]] в кафе у Центрального рынка, куда меня всегда водит Баир.

Из Улан-Удэ образцы для гидрохимии возвращаются поездом в холодильной сумке — это нужно
планировать так, чтобы проводник не поставил сумку у печки.
""",
        aliases=["Ulan-Ude"],
        tags=["places", "travel"],
    ),
    note(
        "Places",
        "Edinburgh",
        "en",
        """
Home of the Leith Institute of Freshwater Science, which despite its name sits a bus ride from
Leith, on the south side of the city. I spent six weeks there in spring 2024 and another two in
November 2025.

## Practical

- The institute guest flat is on Marchmont Road; the key is with reception, not with
  [[Fiona MacLeod|Fiona]].
- The 24 bus goes from the flat to the institute in twenty minutes.
- Bring a waterproof; it rained on 31 of my 42 days.

## What I liked

Arthur's Seat at 7 a.m. before the lab, the reading room of the National Library, and the fish
and chips at the shore in Leith itself. [[Ewan Reid|Ewan]] took me to a ceilidh and I have not
forgiven him.

In Russian paperwork it is Эдинбург; the visa centre in Moscow wanted the institute's address
transliterated back into Latin letters exactly as on the invitation.
""",
        aliases=["Эдинбург"],
        tags=["places", "travel", "leith"],
    ),
    note(
        "Places",
        "Bolshiye Koty",
        "en",
        """
A village on the western shore, about twenty kilometres north-east of [[Листвянка|Listvyanka]].
No road: you come by boat in summer, over the ice in winter, or on foot along the Great Baikal
Trail, a long day's walk.

The university's old biological station is here, where generations of students, including
[[Наталья Сорокина|Natalya]] in the 1980s, learnt to count plankton. We use it as a second base
for the [[Shoreline monitoring]] transect: station K1 is off its pier.

Compared with Listvyanka it is quiet, dark at night and almost free of sewage, which makes it our
reference site: what the shore looks like without a growing tourist village next to it.

Spelled Bolshie Koty on some maps; Большие Коты in Russian.
""",
        aliases=["Большие Коты", "Bolshie Koty"],
        tags=["places", "station"],
    ),
    note(
        "Places",
        "Ushkany Islands",
        "en",
        """
Four small islands in the middle of the lake, off the Svyatoy Nos peninsula, inside the
Zabaikalsky National Park. The Big Ushkany island has a ranger station and a lighthouse; the
small ones are bare rock.

Their shores are the largest haul-out of the [[Нерпа|Baikal seal]]: in June and July hundreds of
seals lie on the stones. That is where the [[Нерпа-камера]] cameras are.

Getting there takes a permit from the national park and about ten hours by boat from the west
shore, so we go once a year, in June, to service the cameras and swap memory cards.

The rangers, Sergei and Lyuba, keep an eye on the cameras the rest of the year and send photos
when a bear knocks one over.
""",
        aliases=["Ушканьи острова"],
        tags=["places", "seals"],
    ),
]
