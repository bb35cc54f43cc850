"""Projects/, Decisions/ and Meetings/. Decisions are records of one choice each; four topics
were decided twice, and the older record is superseded (frontmatter ``superseded_by`` and a
line saying so). On three of the four topics the two records are in different languages."""

from __future__ import annotations

from .common import note

PROJECTS = [
    note(
        "Projects",
        "Shoreline monitoring",
        "en",
        """
The lab's main project and the core of the collaboration with the Leith Institute: regular
measurements along the western shore, to see how settlements change the coastal zone.
In Russian we call it береговой мониторинг.

## Stations

| code | where | depth |
|---|---|---|
| L1–L4 | along the shore at [[Листвянка|Listvyanka]], from the pier to the Krestovaya valley | 5–40 m |
| K1–K2 | off [[Bolshiye Koty]], the reference site | 10–40 m |

## What we measure

Temperature and conductivity profiles, [[Secchi depth]], [[Chlorophyll a|chlorophyll]],
nutrients, phytoplankton, zooplankton and, twice a year, algal cover on the stones
([[Spirogyra blooms]]). How: [[Sampling protocol]].

## People

[[Наталья Сорокина]] leads it in Irkutsk, [[Fiona MacLeod]] at Leith; I coordinate the field
work; [[Ewan Reid]] does the modelling.

## Decisions

- [[2024-03 Buy a second CTD]] — replaced by [[Решение 2025-06 — арендовать второй зонд на лето]]
- [[Решение 2024-05 — отбор проб раз в две недели]] — replaced by [[2025-03 Weekly sampling from June to September]]
- [[2024-09 Field data in a shared cloud folder]] — replaced by [[Решение 2025-01 — данные на сервере лаборатории]]
""",
        aliases=["Береговой мониторинг"],
        tags=["project"],
    ),
    note(
        "Projects",
        "Проект Подлёдный",
        "ru",
        """
Зимний проект: что происходит в воде подо льдом, с января по апрель. Под прозрачным льдом
Байкала весной цветут диатомеи, и это цветение кормит всё озеро на полгода вперёд, но
мерить его трудно — нужно выходить на лёд, сверлить лунки и работать на морозе.

## Что делаем

- раз в две недели — профиль температуры и света через лунку, пробы воды с трёх горизонтов;
- толщина льда и снега в каждой точке (см. [[Ледовый покров]]);
- подлёдные погружения с [[Илья Громов|Ильёй]] — фото нижней поверхности льда, где живут
  водоросли.

Точки — на траверзе Листвянки, в двух километрах от берега, трасса размечена флажками; всё —
строго по [[Безопасность на льду|правилам безопасности на льду]].

Для Leith это самые ценные данные: группа [[Fiona MacLeod|Фионы]] моделирует свет подо льдом.
В англоязычной переписке проект пишут Podlyodny, Podlednyi или просто under-ice project.

Сроки зимнего сезона: сначала планировали на февраль, потом перенесли — см.
[[2025-10 Winter field season moved to March]].
""",
        aliases=["Podlyodny", "Podlednyi", "Under-ice project"],
        tags=["project", "ice"],
    ),
    note(
        "Projects",
        "Microplastics survey",
        "en",
        """
A one-season survey in summer 2025: how much plastic is in the surface water and on the beaches
near [[Листвянка|Listvyanka]], compared with the reference site at [[Bolshiye Koty]].

## Method

- Surface water: a manta net towed for twenty minutes at two knots, three tows per site.
- Beaches: a 50 × 50 cm frame, top five centimetres of sand, ten frames per beach.
- Particles counted and sorted by shape (fibre, fragment, film, foam) under the microscope;
  a subset identified by infrared spectroscopy at Leith.

## First results

Fibres dominate everywhere, most likely from washing machines via sewage. Listvyanka beaches
had about four times more particles than Bolshiye Koty. Foam fragments cluster near the
pier where tourist boats moor.

## Who

Field work by me and [[Ewan Reid|Ewan]] in August; counting by two students in Irkutsk;
spectroscopy in [[Edinburgh]]. Russian name for the reports: микропластик.
""",
        aliases=["Микропластик"],
        tags=["project", "pollution"],
    ),
    note(
        "Projects",
        "Нерпа-камера",
        "ru",
        """
Фотоловушки на лежбищах [[Нерпа|нерпы]] на [[Ushkany Islands|Ушканьих островах]]: шесть камер
на камнях, снимок каждые десять минут с июня по октябрь. Задача — посчитать, сколько нерп
выходит на берег в зависимости от температуры воды и погоды, и как это меняется от года к году.

Камеры ставим в июне, карты памяти меняем в августе, снимаем в октябре. Экспедиция на острова —
десять часов на катере и разрешение национального парка; подаём в марте.

Фотографий за сезон — около ста тысяч. Считаем нерп сначала нейросетью, потом студенты
проверяют каждую десятую фотографию вручную. Нейросеть путает мокрые камни с нерпами в
пасмурные дни.

Отдельная история — медведь, который в 2024 году дважды ронял камеру №4. Теперь она на
металлической стойке.

Результаты первых двух сезонов: в жаркие недели нерп на камнях меньше, они уходят в воду.
По-английски проект называем Seal cam.
""",
        aliases=["Seal cam"],
        tags=["project", "seals"],
    ),
]


DECISIONS = [
    # ------------------------------------------------------------------ second CTD
    note(
        "Decisions",
        "2024-03 Buy a second CTD",
        "en",
        """
> Superseded by [[Решение 2025-06 — арендовать второй зонд на лето]]: we did not buy one.

**Decision.** Buy a second CTD profiler so that the Listvyanka and Bolshiye Koty stations can be
profiled on the same day by two crews.

**Why.** With one instrument the two sites are measured on different days, and an
[[Upwelling|upwelling]] in between makes the comparison meaningless. A second instrument also
covers the winter months when the first one is away for calibration.

**Cost.** About 1.9 million roubles with the fluorometer; to be requested in the 2025 equipment
budget.

Decided by [[Наталья Сорокина]], March 2024, after [[Пётр Ёлкин|Pyotr]] priced three models.
""",
        date="2024-03-12",
        status="superseded",
        superseded_by="[[Решение 2025-06 — арендовать второй зонд на лето]]",
        tags=["decision", "equipment"],
    ),
    note(
        "Decisions",
        "Решение 2025-06 — арендовать второй зонд на лето",
        "ru",
        """
Заменяет [[2024-03 Buy a second CTD]]: второй зонд не покупаем.

**Решение.** На летний сезон, с июня по сентябрь, арендуем второй CTD-зонд у гидрометслужбы в
Иркутске. Покупку снимаем с плана.

**Почему.** Заявку на оборудование 2025 года урезали вдвое, а аренда на четыре месяца стоит
меньше десятой части цены нового прибора. Зимой второй зонд не нужен: на льду работает одна
бригада, а пока основной прибор на калибровке, выручает старый резервный.

**Условия.** Прибор забирает и возвращает [[Пётр Ёлкин|Петя]], проверка на палубе до и после —
по [[Обслуживание CTD-зонда|инструкции по обслуживанию]].

Решила [[Наталья Сорокина|Наталья Алексеевна]], июнь 2025, обсуждали на
[[2025-06-16 Call with Leith|созвоне с Leith]].
""",
        date="2025-06-18",
        supersedes="[[2024-03 Buy a second CTD]]",
        tags=["decision", "equipment"],
    ),
    # ------------------------------------------------------------------ sampling frequency
    note(
        "Decisions",
        "Решение 2024-05 — отбор проб раз в две недели",
        "ru",
        """
> Заменено: [[2025-03 Weekly sampling from June to September]].

**Решение.** С мая 2024 года береговые станции обходим раз в две недели круглый год, кроме
ледостава и вскрытия, когда на воду не выйти.

**Почему.** Раньше ходили раз в месяц, и летние события — апвеллинги, вспышки нитчатки —
проскакивали между выходами. Чаще, чем раз в две недели, не позволяют люди и топливо.

**Кто.** Выходы планирую я, катер — [[Илья Громов]], пробы в Иркутске принимает
[[Ольга Щербакова]].

Утвердила [[Наталья Сорокина]] в мае 2024.
""",
        date="2024-05-06",
        status="superseded",
        superseded_by="[[2025-03 Weekly sampling from June to September]]",
        tags=["decision", "sampling"],
    ),
    note(
        "Decisions",
        "2025-03 Weekly sampling from June to September",
        "en",
        """
Replaces [[Решение 2024-05 — отбор проб раз в две недели]].

**Decision.** From June to September the shore stations are sampled every week; the rest of the
open-water season stays fortnightly.

**Why.** Two summers of fortnightly data showed that the events we care about most — algal
blooms near the villages and wind-driven cold water — last days, not weeks. Leith offered to
pay for the extra fuel and a summer student, which made it affordable.

**Consequences.** Phytoplankton counting in Irkutsk doubles in summer; [[Ольга Щербакова|Olga]]
gets the summer student. The protocol itself does not change ([[Sampling protocol]]).

Agreed at the [[2025-03-05 Планёрка на станции|station meeting on 5 March 2025]] and signed off
by [[Наталья Сорокина|Natalya]].
""",
        date="2025-03-10",
        supersedes="[[Решение 2024-05 — отбор проб раз в две недели]]",
        tags=["decision", "sampling"],
    ),
    # ------------------------------------------------------------------ data storage
    note(
        "Decisions",
        "2024-09 Field data in a shared cloud folder",
        "en",
        """
> Superseded by [[Решение 2025-01 — данные на сервере лаборатории]].

**Decision.** All field data — CTD files, field sheets, photos — goes into one shared cloud
folder that both labs can see, organised by year and month.

**Why.** Until now files lived on the station laptop and on whatever memory stick someone had in
their pocket. Leith needs the files within a week of each trip.

**Risks we accepted.** The folder belongs to a personal account; the free storage will run out
in about a year; the station connection makes large uploads slow.

Decided by me and [[Ewan Reid|Ewan]], September 2024.
""",
        date="2024-09-20",
        status="superseded",
        superseded_by="[[Решение 2025-01 — данные на сервере лаборатории]]",
        tags=["decision", "data"],
    ),
    note(
        "Decisions",
        "Решение 2025-01 — данные на сервере лаборатории",
        "ru",
        """
Заменяет [[2024-09 Field data in a shared cloud folder]].

**Решение.** Все полевые данные хранятся на сервере лаборатории в Иркутске. Leith получает доступ
на чтение по защищённому каналу. Облачная папка закрыта, её содержимое перенесено.

**Почему.** Облачная папка была на личном аккаунте и упёрлась в лимит; институт потребовал,
чтобы данные по проектам хранились на его оборудовании. Сервер к тому же делает ночную
резервную копию, чего у облачной папки не было.

**Как загружать:** [[Загрузка данных]].

Обсудили на [[2025-01-20 Call with Leith|январском созвоне с Leith]]; [[Ewan Reid|Юэн]]
проверил доступ из Эдинбурга в тот же день.
""",
        date="2025-01-24",
        supersedes="[[2024-09 Field data in a shared cloud folder]]",
        tags=["decision", "data"],
    ),
    # ------------------------------------------------------------------ winter season
    note(
        "Decisions",
        "2024-11 Winter field season in February",
        "en",
        """
> Superseded by [[2025-10 Winter field season moved to March]].

**Decision.** The under-ice field season of [[Проект Подлёдный|Podlyodny]] runs through February:
first holes on 1 February, last trip on 28 February.

**Why.** The ice off Listvyanka is usually safe by the end of January, February days are long
enough for a full station, and the [[CTD maintenance|calibration]] of the main profiler can be
finished before March.

Decided at a meeting with [[Fiona MacLeod|Fiona]] and [[Наталья Сорокина|Natalya]] in November 2024.
""",
        date="2024-11-14",
        status="superseded",
        superseded_by="[[2025-10 Winter field season moved to March]]",
        tags=["decision", "ice"],
    ),
    note(
        "Decisions",
        "2025-10 Winter field season moved to March",
        "en",
        """
Replaces [[2024-11 Winter field season in February]].

**Decision.** From winter 2026 the under-ice season runs from 1 to 31 March.

**Why.** In winter 2025 the ice near the station was not safe until 12 February and we lost half
the planned trips. The diatom bloom under the ice, which [[Fiona MacLeod|Fiona]]'s model needs,
peaks in March anyway. March days are longer and warmer for the crew.

**Risk.** A warm March can end the season early; the ice is checked every day by
[[Илья Громов|Ilya]], and the [[Ice safety]] rules on grey ice apply.

Proposed at the [[2025-09-02 Планёрка на станции|station meeting in September]], confirmed on
the [[2025-11-10 Call with Leith|November call]].
""",
        date="2025-10-06",
        supersedes="[[2024-11 Winter field season in February]]",
        tags=["decision", "ice"],
    ),
]


MEETINGS = [
    note(
        "Meetings",
        "2025-01-20 Call with Leith",
        "en",
        """
With [[Fiona MacLeod|Fiona]], [[Ewan Reid|Ewan]], [[Наталья Сорокина|Natalya]] and me.

## Notes

- The shared cloud folder is full. Natalya says the institute wants project data on its own
  server anyway. Agreed to move everything there; Ewan needs read access from Edinburgh →
  [[Решение 2025-01 — данные на сервере лаборатории]].
- Winter season: ice still not safe at the station; the first under-ice trip is postponed.
- Fiona wants the 2024 temperature profiles with upwelling days flagged before her report.

## Actions

- Me: ask IT for an account for Ewan by Friday.
- Ewan: send the flagging rule in writing.
- Natalya: letter to the institute about server space.
""",
        date="2025-01-20",
        tags=["meeting", "leith"],
    ),
    note(
        "Meetings",
        "2025-06-16 Call with Leith",
        "en",
        """
[[Fiona MacLeod|Fiona]], [[Ewan Reid|Ewan]], [[Наталья Сорокина|Natalya]], [[Пётр Ёлкин|Pyotr]], me.

The equipment budget came back cut in half. Natalya proposed renting the second profiler for
the summer from the hydrometeorological service instead of buying one; Pyotr has used their
instruments before and says they are well kept. Fiona agreed, as long as both instruments are
cross-checked at the same station on the first day →
[[Решение 2025-06 — арендовать второй зонд на лето]].

Ewan arrives on 1 July and stays until the end of August; he will do the microplastics tows with
me ([[Microplastics survey]]).

Fiona asked whether the weekly summer sampling has started. It has, since 2 June.

Next call in November, after the field season.
""",
        date="2025-06-16",
        tags=["meeting", "leith"],
    ),
    note(
        "Meetings",
        "2025-11-10 Call with Leith",
        "en",
        """
Attendees: [[Fiona MacLeod|Fiona]], [[Ewan Reid|Ewan]], [[Наталья Сорокина|Natalya]] and me.

1. **Winter season.** Confirmed the move of the under-ice season to March
   ([[2025-10 Winter field season moved to March]]). Fiona's student will join for the last two
   weeks.
2. **Summer results.** Weekly sampling caught three upwelling events that fortnightly sampling
   would have missed. Ewan's model separates two of them from ordinary cooling.
3. **Microplastics.** Spectroscopy in Edinburgh is done for half the samples; the rest by
   January.
4. **Report.** Fiona's annual report goes to the funder on 1 December; she needs the station map
   with the new Bolshiye Koty station K2.

Next call: end of January 2026.
""",
        date="2025-11-10",
        tags=["meeting", "leith"],
    ),
    note(
        "Meetings",
        "2025-03-05 Планёрка на станции",
        "ru",
        """
Присутствовали: [[Наталья Сорокина|Наталья Алексеевна]], [[Пётр Ёлкин|Петя]],
[[Илья Громов|Илья]], [[Ольга Щербакова|Ольга]], я.

**Летний отбор проб.** Два лета раз в две недели показали, что апвеллинги и вспышки нитчатки
проскакивают между выходами. Leith готов оплатить топливо и летнего студента. Решили: летом —
каждую неделю, остальное время — как было →
[[2025-03 Weekly sampling from June to September]].

**Пирс.** После зимы опять повело две сваи. Петя починит до середины мая, нужны доски и
скобы — заказать.

**Катер.** Илья просит новый эхолот, старый врёт на мелководье. Отложили до осени.

**Разное.** Ольга напомнила, что пробы с Люголем должны приезжать в Иркутск в тот же день.
""",
        date="2025-03-05",
        tags=["meeting", "station"],
    ),
    note(
        "Meetings",
        "2025-09-02 Планёрка на станции",
        "ru",
        """
Присутствовали: [[Наталья Сорокина|Наталья Алексеевна]], [[Пётр Ёлкин|Петя]],
[[Илья Громов|Илья]], я.

1. **Зимний сезон.** Прошлой зимой лёд у станции встал надёжно только 12 февраля, половину
   выходов потеряли. Предложение: перенести подлёдный сезон на март — и безопаснее, и цветение
   диатомей как раз в марте. Наталья Алексеевна согласна, но хочет услышать Фиону →
   [[2025-10 Winter field season moved to March]].
2. **Итоги лета.** Все недельные выходы состоялись, кроме двух штормовых. Арендованный зонд
   вернули без замечаний.
3. **Эхолот.** Купили, Илья доволен.
4. **Ушканьи острова.** Камеры сняты, карты памяти у студентов, см. [[Нерпа-камера]].

Следующая планёрка — в декабре, после ледостава.
""",
        date="2025-09-02",
        tags=["meeting", "station"],
    ),
]
