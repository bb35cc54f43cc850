"""The labelled queries, hand-written, naming their notes by title.

``lang`` says which language the query is in and which languages its relevant notes are in:
``en->en`` and ``ru->ru`` are monolingual, ``en->ru`` and ``ru->en`` cross-lingual (the answer
is only in the other language), ``en->en+ru`` and ``ru->en+ru`` have relevant notes in both (a
guide and its translation, or a theme spread over notes in both languages). Transliterated
names typed in Latin letters (``Moskva``, ``Pyotr Yolkin``) count as English queries.

Bridge queries carry ``via`` (the note the wording matches, linked to or from the answer in its
body) and ``distinctive`` (words found in the query and in ``via``, never in the answer).
Temporal queries carry ``older``: notes of the same topic or series that are out of date and
deliberately unlabelled.
"""

from __future__ import annotations


def q(qid, qtype, lang, text, relevant, partial=(), via=None, distinctive=(), older=()):
    return {
        "id": qid, "type": qtype, "lang": lang, "query": text, "relevant": list(relevant),
        "partial": list(partial), "via": via, "distinctive": list(distinctive), "older": list(older),
    }


WEEKLY = "2025-03 Weekly sampling from June to September"
SERVER = "Решение 2025-01 — данные на сервере лаборатории"
RENT = "Решение 2025-06 — арендовать второй зонд на лето"
MARCH = "2025-10 Winter field season moved to March"

QUERIES = [
    # ------------------------------------------------------------------ entity
    q("entity-01", "entity", "en->ru", "Pyotr Yolkin", ["Пётр Ёлкин"]),
    q("entity-02", "entity", "ru->ru", "Петр Елкин", ["Пётр Ёлкин"]),
    q("entity-03", "entity", "en->en", "Fiona MacLeod", ["Fiona MacLeod"]),
    q("entity-04", "entity", "ru->en", "Фиона Маклауд", ["Fiona MacLeod"]),
    q("entity-05", "entity", "en->ru", "Moskva", ["Москва"]),
    q("entity-06", "entity", "en->ru", "Olkhon island", ["Ольхон"]),
    q("entity-07", "entity", "ru->ru", "Баир Цыдыпов", ["Баир Цыдыпов"]),
    q("entity-08", "entity", "en->en", "who is Ewan", ["Ewan Reid"]),
    q("entity-09", "entity", "en->ru", "Natalia Sorokina", ["Наталья Сорокина"]),
    q("entity-10", "entity", "en->ru", "Listvyanka", ["Листвянка"]),
    q("entity-11", "entity", "ru->en", "Большие Коты", ["Bolshiye Koty"]),
    q("entity-12", "entity", "en->ru", "project Podlyodny", ["Проект Подлёдный"]),
    q("entity-13", "entity", "ru->ru", "Ольга Щербакова", ["Ольга Щербакова"]),
    q("entity-14", "entity", "ru->en", "Эдинбург", ["Edinburgh"]),
    q("entity-15", "entity", "en->ru", "Olga Scherbakova", ["Ольга Щербакова"]),
    q("entity-16", "entity", "en->en", "Ushkany Islands", ["Ushkany Islands"], ["Нерпа-камера"]),

    # ------------------------------------------------------------------ theme
    q("theme-01", "theme", "en->en+ru", "ice safety and winter work on the lake",
      ["Ice safety", "Безопасность на льду", "Проект Подлёдный"], ["Ледовый покров", "Skating on Baikal ice"]),
    q("theme-02", "theme", "ru->en+ru", "что угрожает чистоте воды у берега Байкала",
      ["Эвтрофикация", "Spirogyra blooms", "Microplastics survey"], ["Листвянка", "Идеи для статьи"]),
    q("theme-03", "theme", "en->en+ru", "endemic animals of Lake Baikal",
      ["Нерпа", "Омуль", "Epischura baikalensis"]),
    q("theme-04", "theme", "en->en+ru", "how does field data get from the boat to the server",
      ["Data upload", "Загрузка данных", SERVER]),
    q("theme-05", "theme", "en->en+ru", "train journeys",
      ["Trans-Siberian trip 2024", "Кругобайкальская железная дорога"]),
    q("theme-06", "theme", "ru->en+ru", "уход за оборудованием и ремонт",
      ["Обслуживание CTD-зонда", "CTD maintenance", "Пётр Ёлкин"]),
    q("theme-07", "theme", "en->en", "collaboration with the Leith Institute",
      ["Fiona MacLeod", "Ewan Reid", "Shoreline monitoring"], ["Edinburgh", "2025-11-10 Call with Leith"]),
    q("theme-08", "theme", "ru->en+ru", "наблюдения за нерпой",
      ["Нерпа-камера", "Нерпа", "Ushkany Islands"]),
    q("theme-09", "theme", "en->en+ru", "winds on the lake and what they do to the water",
      ["Сарма", "Upwelling"]),
    q("theme-10", "theme", "ru->ru", "бурятская кухня и культура", ["Позы", "Улан-Удэ"]),
    q("theme-11", "theme", "en->en", "how we measure water clarity and algae",
      ["Secchi depth", "Chlorophyll a"], ["Spirogyra blooms", "Sampling protocol"]),

    # ------------------------------------------------------------------ bridge
    q("bridge-01", "bridge", "ru->ru", "кто спас катер «Омулёвка», когда его сорвало с якоря?",
      ["Илья Громов"], via="Сарма", distinctive=["Омулёвк", "якор"]),
    q("bridge-02", "bridge", "en->ru", "who recalibrated the fluorometer that drifted by a third?",
      ["Ольга Щербакова"], via="Secchi depth", distinctive=["fluorometer", "drifted"]),
    q("bridge-03", "bridge", "en->ru", "who priced three models before we decided to buy a second profiler?",
      ["Пётр Ёлкин"], ["2024-03 Buy a second CTD"], via="2024-03 Buy a second CTD", distinctive=["priced", "three models"]),
    q("bridge-04", "bridge", "ru->en", "кто после бани сказал, что теперь понимает русскую литературу?",
      ["Ewan Reid"], via="Баня", distinctive=["бани", "литератур"]),
    q("bridge-05", "bridge", "ru->en", "кто съел семь поз и попросил рецепт по-английски?",
      ["Fiona MacLeod"], via="Позы", distinctive=["съел", "рецепт"]),
    q("bridge-06", "bridge", "en->en", "who took me to a ceilidh and has not been forgiven?",
      ["Ewan Reid"], via="Edinburgh", distinctive=["ceilidh", "forgiven"]),
    q("bridge-07", "bridge", "en->ru", "which of our projects do the rangers Sergei and Lyuba keep an eye on?",
      ["Нерпа-камера"], via="Ushkany Islands", distinctive=["rangers", "Sergei", "Lyuba"]),
    q("bridge-08", "bridge", "ru->ru", "через кого я знаю тётю Дариму из Хужира?",
      ["Баир Цыдыпов"], via="Ольхон", distinctive=["Дарим", "Хужир"]),
    q("bridge-09", "bridge", "en->en", "in which city are the plastic particles identified by infrared spectroscopy?",
      ["Edinburgh"], via="Microplastics survey", distinctive=["infrared", "spectroscopy"]),
    q("bridge-10", "bridge", "ru->en", "куда нерпы летом выходят лежать на камни?",
      ["Ushkany Islands"], ["Нерпа-камера"], via="Нерпа", distinctive=["камни"]),
    q("bridge-11", "bridge", "en->ru", "who did Fiona first meet at a conference, before she came to stand on the ice?",
      ["Наталья Сорокина"], via="Fiona MacLeod", distinctive=["conference", "stand on the ice"]),

    # ------------------------------------------------------------------ compare
    q("compare-01", "compare", "en->en", "Secchi depth vs chlorophyll a", ["Secchi depth", "Chlorophyll a"]),
    q("compare-02", "compare", "ru->ru", "нерпа и омуль: чем питаются", ["Нерпа", "Омуль"]),
    q("compare-03", "compare", "en->en+ru", "Listvyanka or Bolshiye Koty: which shore is cleaner?",
      ["Листвянка", "Bolshiye Koty"]),
    q("compare-04", "compare", "ru->en+ru", "Транссиб или Кругобайкалка — какая поездка понравилась больше",
      ["Trans-Siberian trip 2024", "Кругобайкальская железная дорога"]),
    q("compare-05", "compare", "en->en+ru", "Fiona MacLeod vs Natalya Sorokina: who leads what",
      ["Fiona MacLeod", "Наталья Сорокина"]),
    q("compare-06", "compare", "ru->en+ru", "апвеллинг и сарма — в чём разница", ["Upwelling", "Сарма"]),
    q("compare-07", "compare", "ru->en", "эпишура и спирогира: что общего", ["Epischura baikalensis", "Spirogyra blooms"]),
    q("compare-08", "compare", "en->ru", "Olkhon or Ulan-Ude for a trip", ["Ольхон", "Улан-Удэ"]),
    q("compare-09", "compare", "en->en", "ice safety rules versus skating on the ice", ["Ice safety", "Skating on Baikal ice"],
      ["Безопасность на льду"]),

    # ------------------------------------------------------------------ temporal
    q("temporal-01", "temporal", "en->en", "how often do we sample the shore stations in summer now?",
      [WEEKLY], ["2025-03-05 Планёрка на станции"], older=["Решение 2024-05 — отбор проб раз в две недели"]),
    q("temporal-02", "temporal", "ru->en", "как часто сейчас отбираем пробы летом",
      [WEEKLY], ["2025-03-05 Планёрка на станции"], older=["Решение 2024-05 — отбор проб раз в две недели"]),
    q("temporal-03", "temporal", "en->ru", "where is our field data stored now?",
      [SERVER], ["2025-01-20 Call with Leith", "Data upload", "Загрузка данных"],
      older=["2024-09 Field data in a shared cloud folder"]),
    q("temporal-04", "temporal", "ru->ru", "где теперь хранятся полевые данные",
      [SERVER], ["2025-01-20 Call with Leith", "Data upload", "Загрузка данных"],
      older=["2024-09 Field data in a shared cloud folder"]),
    q("temporal-05", "temporal", "en->ru", "are we still buying a second CTD?",
      [RENT], ["2025-06-16 Call with Leith"], older=["2024-03 Buy a second CTD"]),
    q("temporal-06", "temporal", "ru->en", "когда теперь зимний полевой сезон на льду",
      [MARCH], ["2025-09-02 Планёрка на станции", "2025-11-10 Call with Leith", "Проект Подлёдный"],
      older=["2024-11 Winter field season in February"]),
    q("temporal-07", "temporal", "en->en", "latest call with Leith",
      ["2025-11-10 Call with Leith"], older=["2025-01-20 Call with Leith", "2025-06-16 Call with Leith"]),
    q("temporal-08", "temporal", "ru->ru", "последняя планёрка на станции",
      ["2025-09-02 Планёрка на станции"], older=["2025-03-05 Планёрка на станции"]),
    q("temporal-09", "temporal", "en->en", "what did we agree with Leith in June 2025?",
      ["2025-06-16 Call with Leith"], [RENT], older=["2025-01-20 Call with Leith", "2025-11-10 Call with Leith"]),
    q("temporal-10", "temporal", "en->en", "what is the current plan for the under-ice season?",
      [MARCH], ["2025-09-02 Планёрка на станции", "2025-11-10 Call with Leith", "Проект Подлёдный"],
      older=["2024-11 Winter field season in February"]),
    q("temporal-11", "temporal", "ru->ru", "что решили на планёрке в марте 2025",
      ["2025-03-05 Планёрка на станции"], [WEEKLY], older=["2025-09-02 Планёрка на станции"]),

    # ------------------------------------------------------------------ navigational
    q("nav-01", "navigational", "en->en+ru", "sampling protocol", ["Sampling protocol", "Протокол отбора проб"]),
    q("nav-02", "navigational", "ru->en+ru", "протокол отбора проб", ["Протокол отбора проб", "Sampling protocol"]),
    q("nav-03", "navigational", "en->ru", "ice safety guide in Russian", ["Безопасность на льду"], ["Ice safety"]),
    q("nav-04", "navigational", "en->en+ru", "CTD maintenance", ["CTD maintenance", "Обслуживание CTD-зонда"]),
    q("nav-05", "navigational", "ru->en+ru", "как загружать данные на сервер", ["Загрузка данных", "Data upload"]),
    q("nav-06", "navigational", "en->ru", "my banya note", ["Баня"]),
    q("nav-07", "navigational", "ru->ru", "заметка про Братьев Карамазовых", ["Братья Карамазовы"]),
    q("nav-08", "navigational", "en->en", "Silent Spring notes", ["Silent Spring"]),
    q("nav-09", "navigational", "en->en", "home page of my notes", ["Home"]),
    q("nav-10", "navigational", "ru->ru", "список людей", ["Люди"]),
    q("nav-11", "navigational", "en->ru", "journal entry from 14 February 2025", ["2025-02-14"]),
    q("nav-12", "navigational", "ru->en", "список вещей в экспедицию", ["Packing list for the field"]),

    # ------------------------------------------------------------------ paraphrase
    q("para-01", "paraphrase", "en->en", "the tiny crustacean that filters most of the lake and keeps it clear",
      ["Epischura baikalensis"]),
    q("para-02", "paraphrase", "ru->en", "маленький рачок, который фильтрует воду и делает её прозрачной",
      ["Epischura baikalensis"]),
    q("para-03", "paraphrase", "en->ru", "freshwater seal pups born in snow dens on the ice", ["Нерпа"]),
    q("para-04", "paraphrase", "ru->ru", "рыба, промысел которой закрыли несколько лет назад", ["Омуль"]),
    q("para-05", "paraphrase", "en->ru", "the fish nobody may catch commercially any more", ["Омуль"]),
    q("para-06", "paraphrase", "en->en", "slimy green stuff covering the rocks next to towns", ["Spirogyra blooms"]),
    q("para-07", "paraphrase", "ru->en", "зелёные нити водорослей на камнях возле посёлков", ["Spirogyra blooms"]),
    q("para-08", "paraphrase", "en->en", "cold water from the depths rising to the surface near the shore", ["Upwelling"]),
    q("para-09", "paraphrase", "ru->ru", "внезапный ураганный ветер, который переворачивает лодки", ["Сарма"]),
    q("para-10", "paraphrase", "en->ru", "the old railway along the southern shore with dozens of tunnels",
      ["Кругобайкальская железная дорога"]),
    q("para-11", "paraphrase", "en->en", "how far down you can still see a white plate in the water", ["Secchi depth"]),
    q("para-12", "paraphrase", "ru->ru", "когда озеро замерзает и когда лёд сходит", ["Ледовый покров"]),
    q("para-13", "paraphrase", "en->ru", "steamed Buryat dumplings with a hole on top", ["Позы"]),
    q("para-14", "paraphrase", "ru->en", "как кататься на коньках по прозрачному льду", ["Skating on Baikal ice"]),
]
