"""People/: colleagues at Brackwater and a few outside contacts.

Each entry is hand-written: role, background, working habits, project roles, and for the
people I manage a short 1:1 log. The writer adds varied framing around these facts.
"""

from __future__ import annotations

from .common import PRONOUNS, bullets, human, link, sections

PEOPLE = [
    dict(
        title="Jonas Brandt", aliases=["Jonas"], pron="he", role="CEO and co-founder", team="leadership",
        loc="Rotterdam HQ", since="2021-03-01", manager=None,
        work="Jonas sets company strategy, owns the relationship with the board and still personally looks after the two largest pharma accounts. He chairs the Monday all-hands and the quarterly planning sessions, and signs off anything that changes what we promise customers.",
        bio="Before Brackwater he spent nine years in operations at a freight forwarder in Hamburg, ending up running its temperature-controlled division. The origin story he tells every new hire: a pallet of insulin left on the apron at Schiphol for five hours in July 2019, because nobody could see its temperature until the logger was read out in the warehouse. He started the company with [[Hélène Marchetti]] eighteen months later.",
        quirks=[
            "Answers email in two batches, around 07:00 and 17:00; Slack is faster for anything urgent.",
            "Distrusts slide decks longer than six pages and will ask for the memo instead.",
            "Ends planning meetings by asking everyone which commitment they would cut first.",
        ],
        projects=[("Jib", "executive sponsor"), ("Gaff", "executive sponsor")],
    ),
    dict(
        title="Hélène Marchetti", aliases=["Helene Marchetti", "Hélène"], pron="she", role="CFO and co-founder", team="leadership",
        loc="Rotterdam HQ", since="2021-03-01", manager=None,
        work="Hélène runs finance, legal entities and the pricing model. She built the unit-economics sheet that every commercial proposal has to pass through, and she is the person who says no to unbudgeted SaaS subscriptions. As of January 2026 she puts our runway at 22 months.",
        bio="She trained as an actuary in Lyon and spent six years in trade finance at a bank in Geneva, mostly on letters of credit for perishables importers. That is where she met [[Jonas Brandt]], who was one of her more difficult clients.",
        quirks=[
            "Wants every cost estimate as a range (low / likely / high), never a single number.",
            "Every budget request needs a 'what happens if we do nothing' paragraph.",
            "Fluent in French, Italian and German; Dutch is 'work in progress' after five years.",
        ],
        projects=[("Capstan", "business owner")],
    ),
    dict(
        title="Mirela Okafor", aliases=["Mirela", "M. Okafor"], pron="she", role="Head of Engineering", team="engineering",
        loc="Rotterdam HQ", since="2022-02-14", manager="Jonas Brandt",
        work="Mirela leads the whole engineering group, about sixteen people across Rotterdam and Lisbon, and is my manager. She owns the engineering budget, hiring plan and the technical roadmap, and she is the escalation point when two projects want the same people.",
        bio="Previously an engineering manager at a Dutch payments company, where she grew a team from four to thirty engineers. Born in Bucharest to a Romanian mother and a Nigerian father, she moved to Rotterdam in 2015 and still cycles in from Schiedam every day, rain or not.",
        quirks=[
            "Prefers a two-page written memo before any decision meeting; no memo, no meeting.",
            "Keeps Wednesday afternoons free of meetings for the whole department ('maker afternoon').",
            "Asks 'what would have to be true?' when she disagrees, which is a signal to bring data.",
        ],
        projects=[("Halyard", "engineering sponsor"), ("Cleat", "sponsor")],
    ),
    dict(
        title="Priya Raman", aliases=["Priya"], pron="she", role="Senior Product Manager", team="product",
        loc="Rotterdam HQ", since="2023-01-09", manager="Jonas Brandt",
        work="Priya owns [[Halyard]] end to end on the product side and also looks after the customer portal. She runs the bi-weekly Halyard steering meeting and keeps the launch plan honest.",
        bio="She came from a fleet telematics startup in Bangalore, then spent three years in Amsterdam at a grocery delivery company, where she ran the dispatch product. She has a master's in industrial engineering from IIT Madras.",
        quirks=[
            "Writes product requirement docs that start with a 'non-goals' section.",
            "Will push back hard on scope added after a steering meeting; bring it to the next one.",
            "Likes customer quotes in every proposal, ideally verbatim from support tickets.",
        ],
        projects=[("Halyard", "product owner"), ("Tiller", "product owner")],
    ),
    dict(
        title="Tomasz Wieczorek", aliases=["Tomasz", "Tomek"], pron="he", role="Staff Platform Engineer", team="platform",
        loc="Rotterdam HQ", since="2022-06-01", manager="Mirela Okafor",
        work="Tomasz is the technical lead of [[Halyard]] and owns our streaming platform end to end, from the ingestion gateway to the consumers that feed alerting. Most architectural reviews for backend work go through him.",
        bio="He grew up in Gdańsk and spent ten years on low-latency trading systems in Warsaw and London before deciding he wanted to work on 'things that physically move'. He is the reason our on-call runbooks have a 'what not to touch' section.",
        quirks=[
            "Reviews pull requests in the morning only; anything opened after lunch waits a day.",
            "Dry sense of humour; a one-word review comment is not anger.",
            "Keeps a personal list of every outage he has caused, and shares it with new hires.",
        ],
        projects=[("Halyard", "tech lead"), ("Bosun", "contributor")],
        log=[
            ("2025-01-20", "Wants to step back from day-to-day Halyard tickets to focus on architecture. Agreed to move two ingestion tickets to [[Yusuf Demir]]."),
            ("2025-05-26", "Frustrated with the GA slip. Suggested he write the technical risk section for the next steering doc himself."),
            ("2025-11-10", "Asked about the staff-plus career ladder. Sent him the draft; he will comment by end of month."),
        ],
    ),
    dict(
        title="Aino Järvinen", aliases=["Aino", "Aino Jarvinen"], pron="she", role="Data Scientist, routing", team="data",
        loc="Rotterdam HQ", since="2023-04-03", manager="Mirela Okafor",
        work="Aino builds the optimisation models behind [[Spinnaker]]: which truck takes which stops in which order, under temperature, time-window and driver-hour constraints. She also reviews every change to the cost function, because small changes there move a lot of money.",
        bio="She did a PhD in operations research at Aalto University on vehicle routing with stochastic travel times, then worked two years for a Finnish grocery chain planning store deliveries around Helsinki.",
        quirks=[
            "Says 'feasible' a lot, and means it in the mathematical sense.",
            "Goes to the sauna every Friday evening and is unreachable after 18:00 that day.",
            "Prefers a notebook with plots over a slide deck for any result discussion.",
        ],
        projects=[("Spinnaker", "lead data scientist")],
    ),
    dict(
        title="Rafael Azevedo", aliases=["Rafael", "Rafa"], pron="he", role="Lisbon Office Lead, Operations", team="operations",
        loc="Lisbon office", since="2024-01-08", manager="Jonas Brandt",
        work="Rafael runs everything physical in Portugal: the Lisbon office, the new warehouse, local hauliers and the relationship with [[Transportes Almeida]]. He was the driving force behind [[Jib]].",
        bio="He spent twelve years at a Portuguese third-party logistics provider and ran a 40,000 m² warehouse in Azambuja before joining us. He grew up in Setúbal and knows half the truck drivers on the A1 by first name.",
        quirks=[
            "Prefers a phone call to a long message; he will call you back within the hour.",
            "Benfica supporter; do not schedule anything important on a derby evening.",
            "Writes meeting notes in Portuguese and translates the action items only.",
        ],
        projects=[("Jib", "project lead")],
    ),
    dict(
        title="Sofía Castaño", aliases=["Sofia Castano", "Sofía"], pron="she", role="Customs and Trade Compliance Lead", team="operations",
        loc="Lisbon office", since="2023-09-04", manager="Rafael Azevedo",
        work="Sofía owns everything that crosses a customs border: declarations, transit documents, tariff codes and the relationships with customs brokers in the Netherlands, Portugal and Spain. She is also the product owner of the automation that files our declarations.",
        bio="Originally from Zaragoza, she is a licensed customs representative in Spain and the Netherlands and spent eight years at a customs brokerage in Algeciras handling North African produce. She joined us from there in September 2023.",
        quirks=[
            "Keeps a spreadsheet of every HS code dispute we have had, with outcomes.",
            "Will not accept 'the broker said so' as an answer; wants the regulation article.",
            "Answers in Spanish if you write to her in Portuguese, as a joke that stopped being one.",
        ],
        projects=[("Bowline", "product owner")],
    ),
    dict(
        title="Dmitri Volkov", aliases=["Дмитрий Волков", "Dima", "Дима"], pron="he", lang="ru", role="ML Engineer", team="data",
        loc="Rotterdam HQ", since="2024-03-11", manager="Mirela Okafor",
        body_ru="""Дима — ML-инженер в Brackwater с марта 2024 года. Ведёт проект [[Sextant]]: модель, которая заранее оценивает, сколько паллет понадобится на каждом направлении через четыре-шесть недель. Сидит в [[Rotterdam HQ|роттердамском офисе]], отчитывается [[Mirela Okafor|Миреле]].

## Откуда он

Родом из Новосибирска, учился в НГУ на мехмате. До нас четыре года работал в Белграде, где строил модели спроса для сети супермаркетов (около 300 магазинов). Переехал в Нидерланды вместе с женой и котом по имени Бублик.

## Чем занимается

- Модели спроса по направлениям: градиентный бустинг плюс иерархическая сверка, чтобы сумма по направлениям совпадала с общим объёмом.
- Раз в неделю созванивается с [[Aino Järvinen|Айно]]: её маршрутизация использует его оценки как входные данные.
- Раз в шесть недель дежурит в общей ротации, хотя считает, что ML-людям там делать нечего.

## Как с ним работать

- Предпочитает письменные вопросы в Slack; на созвонах говорит мало, но потом присылает длинный подробный ответ.
- Не любит слово «магия» в описании моделей. Если спросить «почему модель так решила», покажет графики важности признаков.
- По пятницам учит португальский с [[Rafael Azevedo|Рафаэлем]], в обмен учит его играть в шахматы.

## Заметки

- 2025-05: хочет добавить в модель погоду (жара в Иберии сильно влияет на объёмы охлаждённых грузов).
- 2025-12: метрика ошибки на зимних данных заметно хуже, чем летом; разбирается, почему.
""",
        projects=[("Sextant", "lead")],
    ),
    dict(
        title="Kwame Mensah", aliases=["Kwame"], pron="he", role="Fleet Operations Manager", team="operations",
        loc="Maasvlakte depot", since="2022-09-05", manager="Jonas Brandt",
        work="Kwame runs the day-to-day fleet: 38 contracted reefer trucks, the subcontracted hauliers, driver scheduling and the morning dispatch call. He is the business owner of [[Spinnaker]] and the first person who hears when a load goes wrong on the road.",
        bio="He served eleven years as a logistics officer in the British Army, including two deployments where he ran fuel and food convoys, then ran night trunking for a UK haulier out of Daventry. He moved to the Netherlands in 2022 for this job.",
        quirks=[
            "Runs the dispatch call at 06:30 sharp; joining late means you missed it.",
            "Reads every incident report printed out, with a pen.",
            "Has strong opinions about mirrors on trailers and will share them.",
        ],
        projects=[("Spinnaker", "business owner"), ("Mooring", "stakeholder")],
    ),
    dict(
        title="Ingrid Solberg", aliases=["Ingrid"], pron="she", role="SRE Lead", team="platform",
        loc="Rotterdam HQ", since="2022-11-01", manager="Mirela Okafor",
        work="Ingrid leads site reliability: the on-call rotation, the incident process, our Kubernetes clusters and the cloud bill. She owns [[Bosun]] and [[Ballast]], and she mentors [[Mateus Ribeiro]] in the Lisbon office.",
        bio="From Tromsø originally. She was an SRE at a Norwegian online bank for six years and before that a sysadmin at the university hospital, which she says taught her more about incident response than any book.",
        quirks=[
            "Writes post-mortems within 48 hours, always blameless, always with a timeline in UTC.",
            "Asks for an SLO before agreeing to put anything on call.",
            "Knits during long video calls; she is listening.",
        ],
        projects=[("Bosun", "owner"), ("Ballast", "owner")],
        log=[
            ("2025-02-17", "Burned out after the January incidents. Agreed she takes two weeks off in March; [[Tomasz Wieczorek]] covers escalations."),
            ("2025-06-30", "Happy with how the new rotation launched. Wants to hire one more SRE in Lisbon in 2026."),
            ("2025-10-13", "Mentoring is going well; suggested she writes up her onboarding plan as a template."),
        ],
    ),
    dict(
        title="Yusuf Demir", aliases=["Yusuf"], pron="he", role="Backend Engineer, billing", team="platform",
        loc="Rotterdam HQ", since="2023-02-06", manager="Mirela Okafor",
        work="Yusuf owns billing and invoicing: he leads the [[Capstan]] rewrite and built the integration between our shipment records and the accounting system. He also wrote most of the declaration-filing service inside [[Bowline]].",
        bio="He is from Izmir, studied computer engineering at METU in Ankara and worked at an e-commerce marketplace in Istanbul on payments for four years. He moved to Rotterdam with his partner, who is a port pilot.",
        quirks=[
            "Writes very thorough pull request descriptions, with a 'how to test' section every time.",
            "Will happily take on the boring integration work nobody else wants.",
            "Brings baklava back after every trip home; the kitchen knows before Slack does.",
        ],
        projects=[("Capstan", "lead engineer"), ("Bowline", "engineer")],
        log=[
            ("2025-03-31", "Wants more ownership. Proposed he leads the Capstan cut-over plan end to end."),
            ("2025-08-25", "Pricing change means Capstan must support per-shipment pricing by November. He thinks it is tight but doable."),
        ],
    ),
    dict(
        title="Beatriz Lobo", aliases=["Beatriz", "Bia"], pron="she", role="Product Designer", team="product",
        loc="Lisbon office", since="2024-05-06", manager="Priya Raman",
        work="Beatriz designs the customer portal and the driver app, and she ran the research sessions with dispatchers at three customers in 2025. She maintains our small design system in Figma.",
        bio="She studied communication design in Porto and worked at a Lisbon agency on banking apps before joining us. She bakes, sails a little on the Tejo and organised the office plant rota, which she takes more seriously than anyone expected.",
        quirks=[
            "Shares work-in-progress early and often; 'rough' in a file name means it really is rough.",
            "Asks 'who is holding the phone and what are they wearing?' when designing for drivers.",
            "Prefers async feedback as Figma comments, not Slack threads.",
        ],
        projects=[("Tiller", "designer"), ("Mooring", "designer")],
    ),
    dict(
        title="Oskar Lindqvist", aliases=["Oskar"], pron="he", role="Warehouse Operations Lead", team="operations",
        loc="Maasvlakte depot", since="2022-04-19", manager="Kwame Mensah",
        work="Oskar runs the [[Maasvlakte depot]]: inbound and outbound reefer slots, the cold rooms, forklifts and the eleven people on the warehouse floor. He spent most of 2025 commuting to Lisbon to help set up the new warehouse for [[Jib]].",
        bio="A Swede from Gothenburg who worked in the port there for fifteen years, first as a reach-truck driver and later as a terminal shift manager. He collects old maritime books and lends them out generously.",
        quirks=[
            "Measures everything in pallet positions, including, once, his apartment.",
            "Insists on a walk of the floor before any process change is agreed.",
            "Sends a photo of the cold-room thermometer to the group chat every morning at 07:15.",
        ],
        projects=[("Jib", "warehouse design")],
    ),
    dict(
        title="Nadia Haddad", aliases=["Nadia"], pron="she", role="Security Engineer", team="platform",
        loc="Rotterdam HQ", since="2024-02-12", manager="Mirela Okafor",
        work="Nadia owns application and infrastructure security, our access reviews and the security questionnaires that pharma customers send us (about forty a year). She leads [[Cleat]].",
        bio="Lebanese-Dutch, grew up in Eindhoven, and did a master's in computer security at TU Delft. Before Brackwater she was a penetration tester at a consultancy for five years.",
        quirks=[
            "Runs a phishing simulation every quarter and publishes the click rate without names.",
            "Wants threat models as a short table, not an essay.",
            "Will ask who has admin on anything you mention, every time.",
        ],
        projects=[("Cleat", "lead")],
    ),
    dict(
        title="Chen Wei", aliases=["Wei"], pron="he", role="Mobile Engineer", team="product-engineering",
        loc="Rotterdam HQ", since="2023-07-17", manager="Mirela Okafor",
        work="Chen builds the driver app, [[Mooring]]: proof of delivery, temperature readouts from the trailer, and the offline mode that keeps working in the dead zones on the A15. He pushed for the rewrite in 2025.",
        bio="Previously at a ride-hailing company in Shenzhen, where he worked on the driver app's offline mode and battery usage for four years. He moved to Rotterdam in 2023 and is learning Dutch with surprising speed.",
        quirks=[
            "Tests every release on the cheapest Android phone he could find.",
            "Prefers to pair on UI work and to work alone on sync logic.",
            "Keeps a wall of screenshots of driver complaints next to his desk.",
        ],
        projects=[("Mooring", "lead engineer")],
    ),
    dict(
        title="Marta Kowalczyk", aliases=["Marta"], pron="she", role="QA Engineer", team="product-engineering",
        loc="Rotterdam HQ", since="2023-03-20", manager="Mirela Okafor",
        work="Marta owns test automation across the portal, the driver app and the public API. She built the end-to-end suite that runs before every release and the hardware-in-the-loop rig for sensor firmware.",
        bio="From Kraków, where she studied physics before switching to software testing at a game studio. She has the most complete knowledge of our edge cases of anyone on the team.",
        quirks=[
            "Files bugs with a video, steps, and the exact build number, always.",
            "Believes flaky tests are bugs and will block a release over one.",
            "Happy to teach anyone how to write a Playwright test over lunch.",
        ],
        projects=[("Tiller", "QA"), ("Lanyard", "test rig")],
    ),
    dict(
        title="Lars Eriksen", aliases=["Lars"], pron="he", role="Head of Sales, Life Sciences", team="commercial",
        loc="Rotterdam HQ", since="2022-08-15", manager="Jonas Brandt",
        work="Lars sells to pharma and biotech customers and manages their renewals. He brought in [[Farmanova]] and [[BioCura Labs]], and he co-leads [[Gaff]] because customers' audits land on his desk first.",
        bio="A Dane from Aarhus with fifteen years selling clinical-trial logistics at a large courier. He knows the quality managers of most Dutch pharma wholesalers personally.",
        quirks=[
            "Wants a one-line answer first and the nuance second.",
            "Keeps promises to customers modest and then over-delivers; do not promise dates on his behalf.",
            "Cycles to client meetings in Utrecht when the weather allows, which in his opinion is always.",
        ],
        projects=[("Gaff", "co-lead")],
    ),
    dict(
        title="Femi Adeyemi", aliases=["Femi"], pron="he", role="Data Engineer", team="data",
        loc="Rotterdam HQ", since="2023-05-08", manager="Mirela Okafor",
        work="Femi owns the data platform: the warehouse migration in [[Keel]], the transformation models, the orchestrator and the dashboards in [[Fathom]]. If a number in a board deck looks wrong, he is the one who finds out why.",
        bio="From Lagos, studied at the University of Manchester and worked at a UK energy supplier on meter data pipelines for five years. He moved to Rotterdam in 2023.",
        quirks=[
            "Asks 'who is the consumer of this table?' before building anything.",
            "Keeps a changelog of every metric definition change, with dates.",
            "Plays five-a-side on Thursdays; do not book him after 18:00.",
        ],
        projects=[("Keel", "lead"), ("Fathom", "lead")],
        log=[
            ("2025-02-24", "Keel is behind because of the dbt migration; agreed to drop the historical backfill before 2022."),
            ("2025-09-22", "Wants to present the data platform at a local meetup. Supported; asked him to check customer names with Lars first."),
        ],
    ),
    dict(
        title="Zoë van der Berg", aliases=["Zoe van der Berg", "Zoë"], pron="she", role="People and Culture Lead", team="people",
        loc="Rotterdam HQ", since="2022-10-03", manager="Hélène Marchetti",
        work="Zoë runs hiring operations, onboarding, performance cycles and the office itself. She organises the yearly offsite and owns the remote-work policy, which she has rewritten twice.",
        bio="She worked in HR at a Rotterdam architecture firm and before that at a hospitality group, which she says is the best possible training for running offsites. She speaks Dutch, English and passable Portuguese.",
        quirks=[
            "Sends the interview debrief template within an hour of the last interview.",
            "Insists that every new hire has a buddy who is not their manager.",
            "Keeps the office plant rota going with [[Beatriz Lobo]] in Lisbon.",
        ],
        projects=[],
    ),
    dict(
        title="Mateus Ribeiro", aliases=["Mateus"], pron="he", role="Junior SRE", team="platform",
        loc="Lisbon office", since="2025-04-07", manager="Ingrid Solberg",
        work="Mateus joined the SRE team in Lisbon in April 2025 and is on the on-call rotation since September. He has taken over the Terraform modules for the Portuguese sites and the alert routing for [[Bosun]].",
        bio="He captained the commuter ferries across the Tagus between Cais do Sodré and Barreiro for eight years before retraining through an evening programming bootcamp. His mentor is [[Ingrid Solberg]]. He is very calm during incidents, which he says is easy after docking a ferry in a February gale.",
        quirks=[
            "Reads every runbook end to end before his first shift on a service.",
            "Asks a lot of questions in the first week of anything and almost none afterwards.",
            "Still wakes up at 05:00 out of habit.",
        ],
        projects=[("Bosun", "alert routing")],
    ),
    dict(
        title="Anouk Visser", aliases=["Anouk"], pron="she", role="Legal and Compliance Counsel", team="leadership",
        loc="Rotterdam HQ", since="2023-06-12", manager="Hélène Marchetti",
        work="Anouk handles contracts, data protection and regulatory compliance, including our obligations under the EU guidelines on good distribution practice for medicines. She co-leads [[Gaff]] with [[Lars Eriksen]].",
        bio="She practised transport and insurance law at a Rotterdam firm for seven years, mostly cargo claims. She says she joined a startup to be on the side that prevents claims instead of arguing them.",
        quirks=[
            "Reads contracts on paper with three colours of pen.",
            "Wants a data-processing agreement before any pilot, even a free one.",
            "Turns long email threads into a numbered list of open points.",
        ],
        projects=[("Gaff", "co-lead")],
    ),
    dict(
        title="Gustavo Paiva", aliases=["Gustavo"], pron="he", role="Embedded and IoT Engineer", team="product-engineering",
        loc="Lisbon office", since="2024-02-19", manager="Mirela Okafor",
        work="Gustavo writes the firmware for our temperature loggers and manages the relationship with the hardware vendors. He leads [[Lanyard]] and ran the field trial when we switched vendors in 2025.",
        bio="He studied electrical engineering at the University of Coimbra and spent six years designing soil-moisture sensors for vineyards in the Douro. He has a soldering station at home and a drawer of dead prototypes.",
        quirks=[
            "Explains battery life in milliamp-hours and will draw you the curve.",
            "Prefers to test in a real trailer rather than a climate chamber.",
            "Does not answer messages before his first coffee, around 09:30.",
        ],
        projects=[("Lanyard", "lead")],
    ),
    dict(
        title="Elif Yıldız", aliases=["Elif Yildiz", "Elif"], pron="she", role="Frontend Engineer", team="product-engineering",
        loc="Rotterdam HQ", since="2023-10-02", manager="Mirela Okafor",
        work="Elif is the frontend lead for [[Tiller]] and built most of the charts in [[Fathom]]. She maintains the shared component library and the accessibility checklist.",
        bio="From Ankara, she studied at Bilkent and worked on a travel booking site in Berlin for four years. She moved to Rotterdam in 2023 and organises the monthly frontend guild.",
        quirks=[
            "Wants a screenshot or a short recording in every frontend pull request.",
            "Pushes for keyboard navigation on every form, with good reason.",
            "Runs the office coffee machine descaling schedule.",
        ],
        projects=[("Tiller", "frontend lead"), ("Fathom", "charts")],
    ),
    dict(
        title="Ruairí Ó Briain", aliases=["Ruairi O Briain", "Ruairí"], pron="he", role="Board member and investor", team="external",
        loc=None, since="2022-05-01", manager=None,
        work="Ruairí is a partner at [[Currach Ventures]], which led our seed round in 2022, and he has had a board seat since. He is useful on fundraising and on hiring senior people, and he is blunt about numbers.",
        bio="He built and sold a shipping-software company in Cork before moving into venture. He lives in Dublin and comes to Rotterdam for board meetings four times a year, usually staying an extra day to visit customers with [[Jonas Brandt]].",
        quirks=[
            "Reads the board pack the night before and sends questions at midnight.",
            "Asks 'what would make this a ten times bigger company?' at least once per meeting.",
            "Recommends books constantly and follows up on whether you read them.",
        ],
        projects=[],
    ),
    dict(
        title="Hannah Pohl", aliases=["Dr. Hannah Pohl"], pron="she", role="Cold-chain researcher (external)", team="external",
        loc=None, since="2024-09-01", manager=None,
        work="Hannah is an associate professor in food and pharmaceutical logistics at Wageningen University. We met at a conference in 2024 and she advises us informally on temperature monitoring and on how auditors read our data. We co-supervise a master's student on alert thresholds.",
        bio="German, trained as a chemical engineer in Karlsruhe, with a PhD on degradation kinetics of vaccines during transport. She has sat on working groups for the WHO on temperature-sensitive products.",
        quirks=[
            "Prefers email to any chat tool and answers in long, precise paragraphs.",
            "Free on Fridays for a call, otherwise teaching.",
            "Will correct sloppy use of the word 'stable' in any document.",
        ],
        projects=[],
    ),
]

INTROS = [
    "«{first} is|{first} works as» {role_a}, «based in|working out of|sitting in» {loc}.",
    "{role_cap} «at Brackwater since|since|— joined in» {since_h}, «based in|working from» {loc}.",
    "«Joined|Started at Brackwater» in {since_h} as {role_a}; «based in|works from» {loc}.",
]
INTROS_EXT = [
    "{role_cap}. «Not an employee; we|Outside Brackwater; we» have known each other since {since_h}.",
    "«External contact|Outside contact|Not on payroll» — {role_lc}, «known since|first met» {since_h}.",
]
ROLE_HEAD = ["Role", "What {he} does", "At Brackwater", "Work", "Responsibilities"]
BIO_HEAD = ["Background", "Before Brackwater", "Bio", "Where {he} comes from"]
WORK_HEAD = ["Working with {first}", "How to work with {him}", "Notes on working together", "Good to know"]
LOG_HEAD = ["1:1 log", "1:1 notes", "From our 1:1s"]
PROJ_HEAD = ["Projects", "Involved in", "Current work"]
EXTRA_HABITS = [
    "Calendar is the source of truth for {his} availability; {he} keeps it up to date.",
    "{He} is usually in the office on the anchor days and remote otherwise.",
    "For anything that needs a decision, a short doc beats a meeting with {him}.",
    "Good person to ask for context on decisions made before {since_y}.",
    "Prefers to be told about problems early, even half-understood ones.",
    "Takes notes in the meeting doc as we go, which helps everyone.",
    "{He} tends to go quiet when thinking, not when disagreeing.",
]


def register(ctx):
    for p in PEOPLE:
        n = ctx.add("People", p["title"], "person", aliases=p["aliases"])
        n.data = p
    ctx.data["people"] = PEOPLE


def write(ctx):
    for p in PEOPLE:
        n = ctx.get(p["title"])
        rng = n.rng()
        pr = PRONOUNS[p["pron"]]
        first = p["title"].split()[0]
        since_h = human(p["since"], 3)
        loc = link(p["loc"]) if p["loc"] else ""
        role = p["role"]
        v = dict(first=first, role_a="our " + role, role_cap=role, role_lc=role[0].lower() + role[1:],
                 since_h=since_h, since_y=p["since"][:4], loc=loc, **pr)
        fm = [("aliases", p["aliases"]), ("tags", ["person", p["team"]]), ("role", role)]
        if p["loc"]:
            fm.append(("location", p["loc"].split()[0]))
        fm.append(("since", p["since"][:7]))
        n.frontmatter = fm
        if p.get("lang") == "ru":
            n.body = sections([f"# {p['aliases'][0]}", p["body_ru"]])
            continue
        blocks = []
        if rng.random() < 0.6:
            blocks.append(f"# {p['title']}")
        intro = ctx.expand(rng, rng.choice(INTROS if p["loc"] else INTROS_EXT), **v)
        if p.get("manager"):
            intro += " " + ctx.expand(rng, "«Reports to|Manager:|{His} manager is» ", **v) + link(p["manager"]) + "."
        blocks.append(intro)
        role_block = f"## {ctx.expand(rng, rng.choice(ROLE_HEAD), **v)}\n\n{p['work']}"
        if p["projects"]:
            items = [f"{link(t)} — {r}" for t, r in p["projects"]]
            if rng.random() < 0.5:
                role_block += "\n\n" + bullets(items)
            else:
                role_block += f"\n\n## {ctx.expand(rng, rng.choice(PROJ_HEAD), **v)}\n\n" + bullets(items)
        bio_block = f"## {ctx.expand(rng, rng.choice(BIO_HEAD), **v)}\n\n{p['bio']}"
        if rng.random() < 0.5:
            blocks += [role_block, bio_block]
        else:
            blocks += [bio_block, role_block]
        habits = list(p["quirks"])
        extra = rng.sample(EXTRA_HABITS, k=rng.choice([0, 1, 1, 2]))
        habits += [ctx.expand(rng, e, **v) for e in extra]
        blocks.append(f"## {ctx.expand(rng, rng.choice(WORK_HEAD), **v)}\n\n" + bullets(habits))
        if p.get("log"):
            blocks.append(f"## {rng.choice(LOG_HEAD)}\n\n" + bullets([f"**{d}** — {t}" for d, t in p["log"]]))
        n.body = sections(blocks)
