"""People/: colleagues at the lab and at the Leith Institute. Russian speakers' notes are in
Russian, with the Latin spellings of their names as aliases (passports, papers and e-mails
spell them three different ways)."""

from __future__ import annotations

from .common import note

PEOPLE = [
    note(
        "People",
        "Пётр Ёлкин",
        "ru",
        """
Инженер станции в [[Листвянка|Листвянке]], на станции с 2019 года. До этого двенадцать лет
ходил механиком на судах Восточно-Сибирского речного пароходства, поэтому чинит всё, что
крутится, качает или течёт. В загранпаспорте он Petr Elkin, в статьях с Фионой — Pyotr Yolkin,
и каждый раз, когда бронирую ему билеты, приходится проверять, какое написание в этот раз.

## Что на нём

- все лебёдки, насосы и генератор на станции;
- зонд — см. [[Обслуживание CTD-зонда]], эту инструкцию он написал сам, а я перевела на
  английский для Leith;
- зимой — разметка трассы по льду и проверка трещин вместе с [[Илья Громов|Ильёй]].

## Как с ним работать

Петя не любит письма, любит, когда к нему приходят в мастерскую с чаем. Если что-то сломалось,
лучше сразу принести сломанную деталь, а не описывать её. Отпуск всегда берёт в августе — на
август ничего сложного с техникой не планировать.

Говорит по-английски медленно, но всё понимает; на созвонах с Leith переводить ему не нужно,
нужно просто дать договорить.
""",
        aliases=["Pyotr Yolkin", "Petr Elkin", "Петя Ёлкин"],
        tags=["people", "station"],
    ),
    note(
        "People",
        "Наталья Сорокина",
        "ru",
        """
Заведующая лабораторией прибрежного мониторинга, мой научный руководитель со времён
аспирантуры. Гидробиолог, сорок лет на Байкале; ещё студенткой в восьмидесятых считала
[[Epischura baikalensis|эпишуру]] под микроскопом на биостанции в [[Bolshiye Koty|Больших Котах]].

В английских публикациях — Natalya Sorokina, но на сайте института почему-то Natalia, и
коллеги из Эдинбурга пишут то так, то так.

Она подписывает все планы отбора проб и все заявки на оборудование. Решения принимает быстро,
но только если ей принесли цифры: «сколько стоит, сколько проб, что будет, если не сделаем».
Не любит презентации, любит одну страницу текста.

С [[Fiona MacLeod]] знакома с конференции в Иркутске 2016 года, с этого и началось всё
сотрудничество с Leith. Раз в квартал созваниваются сами, без нас.

Её кабинет в [[Иркутск|Иркутске]], на станцию приезжает раз в месяц, летом чаще.
""",
        aliases=["Natalya Sorokina", "Natalia Sorokina", "Н. А. Сорокина"],
        tags=["people", "lab"],
    ),
    note(
        "People",
        "Илья Громов",
        "ru",
        """
# Илья Громов

Капитан нашего катера и водолаз. Родом из Большого Голоустного, на воде с детства; знает
каждую бухту от Култука до Больших Котов. Водолазное удостоверение — с 2015 года, погружения
подо льдом — с 2018-го.

Что важно помнить:

1. На воду без его согласия не выходим. Если Илья говорит, что ветер будет, значит будет,
   даже если прогноз обещает штиль.
2. Подлёдные погружения — только с ним и только по [[Безопасность на льду|правилам на льду]].
3. Ему нужно знать план выхода накануне вечером: точки, глубины, сколько человек.

Зимой вместе с [[Пётр Ёлкин|Петей]] прокладывает трассу по льду для [[Проект Подлёдный|Подлёдного]].
Летом возит гостей из Leith и терпеливо объясняет им, почему нельзя стоять на корме во время
спуска зонда.

По-английски почти не говорит, но с Юэном они прекрасно общаются жестами и картами глубин.
""",
        aliases=["Ilya Gromov"],
        tags=["people", "station", "boat"],
    ),
    note(
        "People",
        "Ольга Щербакова",
        "ru",
        """
Альголог, определяет фитопланктон до вида. Сидит в Иркутске, в лаборатории на втором этаже, где
микроскопы. Через неё проходят все пробы фитопланктона и все измерения хлорофилла.

Латиницей её фамилию пишут как угодно: Shcherbakova в паспорте, Scherbakova в старых статьях,
однажды в письме из Эдинбурга было даже Chtcherbakova. В базе данных мы договорились писать
Shcherbakova.

Про неё стоит знать:
- пробы должны быть зафиксированы раствором Люголя в тот же день, иначе она их не примет;
- отвечает на почту раз в день, вечером; срочное — звонить;
- лучше всех в лаборатории разбирается в [[Spirogyra blooms|нитчатых водорослях]] у берега и
  первой забила тревогу про них в 2011 году.

Ведёт для студентов практикум по определению диатомей; сама говорит, что на Байкале диатомеи —
это «весенний лёд, который цветёт».
""",
        aliases=["Olga Shcherbakova", "Olga Scherbakova"],
        tags=["people", "lab"],
    ),
    note(
        "People",
        "Баир Цыдыпов",
        "ru",
        """
Гидрохимик из Улан-Удэ, работает в институте на восточном берегу. Делает для нас анализы
биогенных элементов — фосфаты, нитраты, кремний — когда своя лаборатория не успевает.
Латиницей — Bair Tsydypov.

Познакомились в 2022 году на школе-семинаре на Ольхоне. Он первым показал мне, что по
фосфору у Листвянки летом видно, когда в посёлке заполнены гостиницы.

Образцы ему отправляем поездом через [[Улан-Удэ]] или передаём с оказией; холодильная сумка
должна доехать за сутки. Счета выставляет его институт, раз в квартал.

Когда бываю в Улан-Удэ, он всегда ведёт меня есть [[Позы|позы]] в одно и то же кафе у рынка и
рассказывает про бурятские названия байкальских мысов.
""",
        aliases=["Bair Tsydypov"],
        tags=["people", "partners"],
    ),
    note(
        "People",
        "Fiona MacLeod",
        "en",
        """
Principal investigator at the Leith Institute of Freshwater Science in [[Edinburgh]] and the
reason our collaboration exists. She met [[Наталья Сорокина|Natalya]] at a conference in Irkutsk
in 2016 and came back the next winter to stand on the ice herself.

## Working with Fiona

- She holds the Leith side of the [[Shoreline monitoring]] grant and writes the annual report to
  the funder; she needs our figures by the end of October.
- Prefers a short agenda sent two days before each call; see the [[2025-11-10 Call with Leith|last call]].
- Reads Russian slowly but well: send her the Russian original of any protocol, not only my
  translation.

## Background

Trained on Scottish lochs, then a decade on lake ice in Finland. Her group models how the
length of the ice season changes light under the ice, which is why she cares so much about
our winter data from [[Проект Подлёдный|Podlyodny]].

She is the one who insisted that every dataset we share carries the name of whoever collected
it, down to the boat crew.
""",
        aliases=["Фиона Маклауд", "Fiona"],
        tags=["people", "leith"],
    ),
    note(
        "People",
        "Ewan Reid",
        "en",
        """
Postdoc at Leith, in [[Fiona MacLeod|Fiona]]'s group since 2023. A modeller: he turns our
temperature profiles into a model of the coastal zone and asks awkward questions about gaps in
the data. Юэн Рид in our Russian paperwork.

Spent July and August 2025 at the station. He learned enough Russian to order at the café in
[[Листвянка|Listvyanka]], and got on famously with [[Илья Громов|Ilya]], the two of them drawing
depth contours on napkins.

Things to know:
- he owns the shared analysis code and reviews every change to it;
- he wants raw files, never spreadsheets that someone has "cleaned";
- he is colour-blind, so plots for him need shapes as well as colours.

His current question is whether the cold water that shows up at our shore stations in late
summer is [[Upwelling|upwelling]] driven by the wind or something else.
""",
        aliases=["Юэн Рид"],
        tags=["people", "leith"],
    ),
]
