"""Guides/: the station's four how-to pages, each in English and in Russian. The two versions
of a guide link to each other and say the same things, as a translation does, in each
language's own words."""

from __future__ import annotations

from .common import note

GUIDES = [
    # ------------------------------------------------------------------ sampling protocol
    note(
        "Guides",
        "Sampling protocol",
        "en",
        """
How we take water samples at the shore stations of [[Shoreline monitoring]]. Russian version:
[[Протокол отбора проб]].

## Before going out

1. Check the weather with [[Илья Громов|Ilya]] the evening before.
2. Label the bottles at the station, not on the boat: station code, depth, date, time.
3. Rinse the Niskin bottle and every sample bottle three times with lake water at the station.

## At each station

- Secchi disc first, before the boat stirs up the water (see [[Secchi depth]]).
- Profile with the CTD from the surface to the bottom, slowly, half a metre per second.
- Water samples from 0, 5 and 10 metres: one litre each for chlorophyll, half a litre for
  nutrients, 250 ml fixed with Lugol's solution for phytoplankton.
- A vertical net haul from 25 metres to the surface for zooplankton.

## Back at the station

Nutrient samples into the freezer within two hours. Chlorophyll filtered the same day.
Everything logged in the field sheet and uploaded as described in [[Data upload]].
""",
        tags=["guide", "sampling"],
    ),
    note(
        "Guides",
        "Протокол отбора проб",
        "ru",
        """
Как мы отбираем пробы воды на прибрежных станциях [[Shoreline monitoring|берегового мониторинга]].
Английская версия: [[Sampling protocol]].

## Перед выходом

1. Накануне вечером согласовать погоду с [[Илья Громов|Ильёй]].
2. Подписать бутылки на станции, а не на катере: код точки, горизонт, дата, время.
3. На точке трижды ополоснуть батометр и все бутылки байкальской водой.

## На каждой точке

- Сначала диск Секки, пока катер не взмутил воду (см. [[Secchi depth]]).
- Зондирование CTD от поверхности до дна, медленно, полметра в секунду.
- Пробы воды с 0, 5 и 10 метров: литр на хлорофилл, пол-литра на биогены, 250 мл на
  фитопланктон с фиксацией раствором Люголя.
- Вертикальный лов сетью от 25 метров до поверхности на зоопланктон.

## После возвращения

Пробы на биогены — в морозилку не позже чем через два часа. Хлорофилл фильтруем в тот же день.
Всё записываем в полевой журнал и загружаем, как описано в [[Загрузка данных]].
""",
        tags=["guide", "sampling"],
    ),
    # ------------------------------------------------------------------ ice safety
    note(
        "Guides",
        "Ice safety",
        "en",
        """
Rules for every trip onto the ice, for staff and visitors alike. No exceptions, including for
professors. Russian version: [[Безопасность на льду]].

## Who and when

- Never alone: at least three people, one of them [[Илья Громов|Ilya]] or [[Пётр Ёлкин|Pyotr]].
- Only in daylight, and back before 16:00 in February.
- Not after a thaw day, and not at all once the ice turns grey and granular in April.

## What to carry

Ice picks on a cord round the neck, a throw rope of at least 25 metres, a spare set of dry
clothes in a sealed bag, a charged radio, and an ice chisel to test the ice every hundred metres.

## On the ice

Walk in single file, ten metres apart. Keep away from pressure ridges and from the long cracks
that open in the same places every year; cross them only where Ilya has marked a crossing.
Holes for sampling are cut at least fifty metres from any crack and marked with a flag when we
leave.

If someone goes through: lie flat, throw the rope, do not run to the edge. Warm them up in the
car, not on the ice.
""",
        tags=["guide", "ice", "safety"],
    ),
    note(
        "Guides",
        "Безопасность на льду",
        "ru",
        """
Правила для любого выхода на лёд — для сотрудников и гостей одинаково. Исключений нет, в том
числе для профессоров. Английская версия: [[Ice safety]].

## Кто и когда

- Никогда в одиночку: минимум трое, и один из них — [[Илья Громов|Илья]] или [[Пётр Ёлкин|Петя]].
- Только в светлое время, в феврале — возвращаемся до 16:00.
- Не выходим после оттепели и вообще не выходим, когда в апреле лёд становится серым и
  игольчатым.

## Что взять

Спасалки на шнурке на шее, верёвку не короче 25 метров, запасной комплект сухой одежды в
герметичном мешке, заряженную рацию и пешню, чтобы проверять лёд каждые сто метров.

## На льду

Идём цепочкой, в десяти метрах друг от друга. Держимся подальше от торосов и от становых
щелей, которые открываются каждый год на одних и тех же местах; переходим их только там, где
Илья отметил переход. Лунки для проб сверлим не ближе пятидесяти метров от любой трещины и,
уходя, отмечаем флажком.

Если кто-то провалился: ложиться, бросать верёвку, к краю не бежать. Отогревать в машине, а не
на льду.
""",
        tags=["guide", "ice", "safety"],
    ),
    # ------------------------------------------------------------------ CTD maintenance
    note(
        "Guides",
        "CTD maintenance",
        "en",
        """
How to look after the CTD profiler (conductivity, temperature, depth, plus the fluorometer and the
oxygen sensor). Written by [[Пётр Ёлкин|Pyotr]] in Russian, translated by me:
[[Обслуживание CTD-зонда]].

## After every trip

- Rinse the whole instrument in fresh tap water, never lake water from the bucket.
- Flush the conductivity cell with a syringe of distilled water and leave it filled.
- Put the storage cap back on the oxygen sensor.

## Every month

- Check the O-rings on the battery housing; replace at the first crack. Spares are in the blue
  box in the workshop.
- Download the log and compare the pressure reading on deck with zero.

## Every winter

The instrument goes back to the manufacturer for calibration between December and February,
when the boat is out of the water anyway. Book the slot in October. While it is away the winter
profiles are taken with the old backup sonde, and every file says so.

Never leave it in the sun on deck; the housing heats up and the first metres of every profile
are wrong.
""",
        tags=["guide", "equipment"],
    ),
    note(
        "Guides",
        "Обслуживание CTD-зонда",
        "ru",
        """
Как ухаживать за CTD-зондом (электропроводность, температура, глубина, плюс флуориметр и
датчик кислорода). Написал [[Пётр Ёлкин|Петя]], английский перевод: [[CTD maintenance]].

## После каждого выхода

- Промыть весь прибор пресной водой из-под крана, а не байкальской из ведра.
- Прокачать ячейку электропроводности шприцем с дистиллированной водой и оставить её
  заполненной.
- Надеть на датчик кислорода защитный колпачок.

## Раз в месяц

- Проверить уплотнительные кольца на корпусе батареи; менять при первой трещине. Запасные — в
  синем ящике в мастерской.
- Скачать журнал и сравнить показание давления на палубе с нулём.

## Раз в год, зимой

С декабря по февраль прибор уезжает на калибровку к производителю, катер всё равно на берегу.
Место в очереди бронировать в октябре. Пока его нет, зимние профили снимаем старым резервным
зондом, и это отмечается в каждом файле.

Не оставлять на палубе на солнце: корпус нагревается, и первые метры каждого профиля
получаются неправильными.
""",
        tags=["guide", "equipment"],
    ),
    # ------------------------------------------------------------------ data upload
    note(
        "Guides",
        "Data upload",
        "en",
        """
How field data gets from the boat to the lab server. Russian version: [[Загрузка данных]].

1. The same evening, copy the CTD files and the photos of the field sheets from the laptop to
   the station's external disk. Do not rename the CTD files.
2. Fill in the day's row in the station log: who, which stations, anything unusual (broken
   bottle, upwelling, a sensor that misbehaved).
3. Upload everything to the lab server in Irkutsk, into the folder for the year and month. The
   station's connection is slow; start it overnight.
4. Check in the morning that the file count on the server matches the disk.

Raw files are never edited. Corrections go in a separate file next to the original, with a line
saying who changed what and why — [[Ewan Reid|Ewan]] insists, and he is right.

The server replaced the shared cloud folder we used before; see
[[Решение 2025-01 — данные на сервере лаборатории]].
""",
        tags=["guide", "data"],
    ),
    note(
        "Guides",
        "Загрузка данных",
        "ru",
        """
Как полевые данные попадают с катера на сервер лаборатории. Английская версия: [[Data upload]].

1. В тот же вечер скопировать файлы CTD и фотографии полевых бланков с ноутбука на внешний диск
   станции. Файлы CTD не переименовывать.
2. Заполнить строку дня в журнале станции: кто, какие точки, что было необычного (разбитая
   бутылка, апвеллинг, датчик капризничал).
3. Загрузить всё на сервер лаборатории в Иркутске, в папку года и месяца. Интернет на станции
   медленный — запускать на ночь.
4. Утром проверить, что число файлов на сервере совпадает с диском.

Исходные файлы никогда не редактируются. Исправления — отдельным файлом рядом с оригиналом, со
строкой о том, кто, что и почему поменял; на этом настаивает [[Ewan Reid|Юэн]], и он прав.

Сервер заменил общую облачную папку, которой мы пользовались раньше; см.
[[Решение 2025-01 — данные на сервере лаборатории]].
""",
        tags=["guide", "data"],
    ),
]
