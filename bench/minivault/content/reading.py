"""Reading/: book, paper and article notes with my summary, takeaways and connections."""

from __future__ import annotations

from .common import bullets, link, sections

READING = [
    dict(title="The Goal", author="Eliyahu M. Goldratt", year=1984, type="book", status="read", rating=4, rec="Kwame Mensah",
         how="Kwame lent me his battered copy in my first month and said I would understand dispatch better after reading it. He was right.",
         summary="A business novel. Alex Rogo, a plant manager, has three months to turn his factory around or it closes. A former teacher, Jonah, makes him see the plant as a system whose output is set by its bottlenecks. The best scene is a scout hike where the whole troop can only move as fast as Herbie, the slowest boy, and the gaps in the line grow because of statistical fluctuations and dependent events.",
         takeaways=["Throughput, inventory and operating expense as the only three measures that matter.", "An hour lost at the bottleneck is an hour lost for the whole system; an hour saved elsewhere is a mirage.", "Local efficiency (every machine busy) is often the enemy of global throughput."],
         links=["Cross-docking", "The Phoenix Project", "Thinking in Systems"]),
    dict(title="The Box", author="Marc Levinson", year=2006, type="book", status="read", rating=5, rec="Ruairí Ó Briain",
         how="Ruairí sent it to me after our first board dinner with a note saying 'read this before you tell me trucks are boring'.",
         summary="How the shipping container changed the world economy. Malcom McLean, a trucking entrepreneur, put 58 containers on a converted tanker, the Ideal-X, from Newark to Houston in April 1956. Standardisation took another fifteen years of fights over sizes, unions and port investment. Cheap, reliable shipping made global supply chains and killed old port cities.",
         takeaways=["The technology was simple; the hard part was standards, labour and ports.", "Cost per tonne fell so much that the geography of manufacturing changed.", "Early adopters of the container were not the big shipping lines."],
         links=["Reefer container", "Ninety Percent of Everything", "Bill of lading"]),
    dict(title="Ninety Percent of Everything", author="Rose George", year=2013, type="book", status="read", rating=4, rec="Oskar Lindqvist",
         how="Borrowed from Oskar's shelf of maritime books; he wants it back by the summer.",
         summary="Journalism about the shipping industry. The author spent five weeks on the container ship Maersk Kendal, from Europe through Suez and past the waters off Somalia to Singapore, and uses the voyage to describe crews, flags of convenience, piracy, noise pollution and the sheer invisibility of the industry that moves most of what we own.",
         takeaways=["Seafarers are mostly invisible and often badly protected.", "Flags of convenience make accountability hard to trace.", "The industry is efficient in ways that push costs onto people and oceans."],
         links=["The Box", "Port of Sines"]),
    dict(title="Designing Data-Intensive Applications", author="Martin Kleppmann", year=2017, type="book", status="read", rating=5, rec=None,
         how="Read with the [[Engineering reading group]] over the winter of 2024–25, two chapters per session. My copy is full of sticky notes; the one with the wild boar on the cover.",
         summary="A tour of the ideas underneath databases and distributed systems: data models, storage engines, replication, partitioning, transactions, consistency, consensus, batch and stream processing. It explains trade-offs rather than products, which is why it ages well.",
         takeaways=["Most 'exactly once' is really idempotence plus retries.", "Logs are the unifying abstraction between databases and streams.", "Be precise about which consistency guarantee you need; 'consistent' alone means nothing."],
         links=["Write-ahead log", "Exactly-once delivery", "Change data capture", "Kafka"]),
    dict(title="Team Topologies", author="Matthew Skelton and Manuel Pais", year=2019, type="book", status="read", rating=4, rec="Mirela Okafor",
         how="Mirela handed out copies to the leads in August 2025.",
         summary="A model for organising software teams around the flow of change. Four team types: stream-aligned, enabling, complicated-subsystem and platform; three interaction modes: collaboration, X-as-a-service and facilitating. The central argument is about cognitive load: a team can only own as much software as it can hold in its head, and Conway's law means the architecture will mirror the team structure whether you plan it or not.",
         takeaways=["Design teams first and let the architecture follow.", "Platform teams should be judged by how little their users need to talk to them.", "Limit each team's cognitive load explicitly."],
         links=["2025-09-02 Engineering reorg", "An Elegant Puzzle"]),
    dict(title="Thinking in Systems", author="Donella H. Meadows", year=2008, type="book", status="reading", rating=None, rec=None,
         how="Reading it for the second time, slowly.",
         summary="A primer on systems thinking: stocks and flows, balancing and reinforcing feedback loops, delays, and the traps systems fall into, such as policy resistance, the tragedy of the commons and drift to low performance. Ends with a list of places to intervene in a system, from parameters (weakest) to paradigms (strongest).",
         takeaways=["Delays in feedback loops cause oscillation; our truck bookings are a textbook case.", "Changing numbers is the least effective lever; changing information flows is far stronger.", "Bounded rationality: everyone acts sensibly on what they can see."],
         links=["Bullwhip effect", "The Goal"]),
    dict(title="Accelerate", author="Nicole Forsgren, Jez Humble and Gene Kim", year=2018, type="book", status="read", rating=4, rec="Tomasz Wieczorek",
         how="Tomasz quotes it in every discussion about release frequency, so I finally read it.",
         summary="The research behind the State of DevOps reports, summarised: four key metrics (deployment frequency, lead time for changes, time to restore service, change failure rate) distinguish high performers, and speed and stability go together rather than trading off. Technical practices and culture both predict performance.",
         takeaways=["Measure the four metrics, not lines of code or story points.", "Small batches and trunk-based development beat long-lived branches.", "Culture is measurable; the Westrum typology is a useful lens."],
         links=["Site Reliability Engineering", "Feature flags"]),
    dict(title="Site Reliability Engineering", author="Betsy Beyer, Chris Jones, Jennifer Petoff and Niall Richard Murphy (eds.)", year=2016, type="book", status="read", rating=4, rec="Ingrid Solberg",
         how="Ingrid's recommendation when I asked how to think about on-call; I read about half, the chapters she marked.",
         summary="How Google runs production: service level objectives and error budgets, eliminating toil (kept under half of an SRE's time), monitoring that pages only on symptoms, blameless post-mortems, and on-call practices that do not burn people out.",
         takeaways=["Alert on symptoms users feel, not on causes.", "An error budget turns reliability arguments into a number both sides accept.", "Toil grows unless someone is paid to remove it."],
         links=["SLOs and error budgets", "Alert fatigue", "Bosun"]),
    dict(title="The Phoenix Project", author="Gene Kim, Kevin Behr and George Spafford", year=2013, type="book", status="read", rating=3, rec="Tomasz Wieczorek",
         how="Read on a flight to Lisbon.",
         summary="A novel about IT operations, openly modelled on The Goal. Bill, newly made head of IT operations at a car-parts company, has to rescue a failing project while every change goes through one overloaded engineer, Brent. A mentor figure teaches him the 'three ways': flow, feedback and continual learning.",
         takeaways=["Unplanned work is the silent killer of plans.", "Making one person the bottleneck for every change is a choice, not a fate.", "Work in progress should be visible and limited."],
         links=["The Goal", "Accelerate"]),
    dict(title="Release It!", author="Michael T. Nygard", year=2018, type="book", status="read", rating=5, rec=None,
         how="Second edition, read with the reading group in spring 2025.",
         summary="How production systems fail and how to design them to survive. Anti-patterns (integration points, chain reactions, cascading failures, unbounded result sets) and stability patterns (timeouts, circuit breakers, bulkheads, steady state, fail fast, let it crash, back pressure).",
         takeaways=["Every integration point will eventually hang; timeouts are not optional.", "Bulkheads limit how far one failure spreads.", "Design for the system you will operate, not the one on the whiteboard."],
         links=["Circuit breaker", "Retries and backoff", "Backpressure"]),
    dict(title="An Elegant Puzzle", author="Will Larson", year=2019, type="book", status="read", rating=4, rec="Mirela Okafor",
         how="Mirela's gift when I became a manager.",
         summary="Short essays on engineering management: sizing teams (six to eight engineers per manager), the states a team can be in (falling behind, treading water, repaying debt, innovating) and what helps in each, running migrations, writing strategy, and managing your own time.",
         takeaways=["A team that is falling behind needs people, not process.", "Migrations are the only scalable fix for tech debt; make them easy by doing the hard parts centrally.", "Write the strategy down, even if it is short."],
         links=["Team Topologies"]),
    dict(title="The Mythical Man-Month", author="Frederick P. Brooks Jr.", year=1975, type="book", status="read", rating=3, rec=None,
         how="Old library copy, read on holiday.",
         summary="Essays from running the IBM System/360 operating system project. Adding people to a late software project makes it later; the second system a designer builds tends to be over-engineered; conceptual integrity needs few minds; a surgical-team structure for programming.",
         takeaways=["Communication overhead grows faster than team size.", "Plan to throw one away — you will anyway.", "Much of it still holds fifty years later, which is depressing."],
         links=["An Elegant Puzzle"]),
    dict(title="Deep Work", author="Cal Newport", year=2016, type="book", status="read", rating=3, rec=None, nolinks=True,
         how="Bought at the airport.",
         summary="Argues that the ability to focus without distraction on demanding tasks is rare and valuable, and that it can be trained. Rules: work deeply in scheduled blocks, embrace boredom, quit social media that does not earn its place, drain the shallows.",
         takeaways=["Schedule focus time as seriously as meetings.", "Shutdown ritual at the end of the day.", "A bit preachy, but the time-blocking chapter changed my week."],
         links=[]),
    dict(title="Shape Up", author="Ryan Singer", year=2019, type="book", status="read", rating=4, rec="Priya Raman",
         how="Priya wants us to try parts of it for the portal.",
         summary="How Basecamp builds product: six-week cycles followed by a two-week cool-down, work shaped in advance at the right level of abstraction, an appetite (how much time a problem deserves) instead of an estimate, a betting table that decides what goes into the next cycle, and no backlog.",
         takeaways=["Fixed time, variable scope.", "Shaping is real work and needs senior people.", "Hill charts show uncertainty better than percentages."],
         links=["Tiller"]),
    dict(title="The Checklist Manifesto", author="Atul Gawande", year=2009, type="book", status="read", rating=4, rec="Anouk Visser",
         how="Anouk recommended it while we were writing SOPs for the warehouse.",
         summary="A surgeon's argument for checklists in complex work. Aviation and construction manage complexity with simple lists; the WHO surgical safety checklist cut complications and deaths in eight hospitals. Good checklists are short, used at defined pause points, and either read-do or do-confirm.",
         takeaways=["Checklists catch the dumb mistakes experts make under pressure.", "Keep them to five to nine items per pause point.", "They work only if the team is allowed to stop the process."],
         links=["Good Distribution Practice", "Gaff"]),
    dict(title="Range", author="David Epstein", year=2019, type="book", status="read", rating=3, rec=None, nolinks=True,
         how="From a friend's book swap.",
         summary="Argues that in many fields generalists who sample widely and specialise late do better than early specialists, especially in 'wicked' environments where feedback is delayed or misleading, as opposed to 'kind' ones like chess or golf.",
         takeaways=["Match quality: the fit between a person and their work matters more than head start.", "Analogical thinking across domains is a skill.", "Good for hiring career changers."],
         links=[]),
    dict(title="Seeing Like a State", author="James C. Scott", year=1998, type="book", status="to read", rating=None, rec="Ruairí Ó Briain",
         how="Ruairí again, who says every data person should read it.",
         summary="How states make societies legible — standard surnames, cadastral maps, scientific forestry, planned cities — and why grand schemes that ignore local practical knowledge fail. Scott's term for that knowledge is metis.",
         takeaways=["Not read yet. The forestry chapter is supposed to be the place to start.", "Relevant to dashboards: what we measure becomes what we manage.", "Ruairí's one-line version: the map is not the territory, and the people who drew the map will blame the territory."],
         links=["Fathom"]),
    dict(title="Raft paper", author="Diego Ongaro and John Ousterhout", year=2014, type="paper", status="read", rating=5, rec=None,
         how="'In Search of an Understandable Consensus Algorithm', USENIX ATC 2014. Read for the reading group.",
         summary="Raft is a consensus algorithm designed to be easier to understand than Paxos. It separates leader election, log replication and safety. Servers are followers, candidates or leaders; time is divided into terms; a leader replicates log entries and commits them once a majority has them.",
         takeaways=["Understandability as a design goal works: the paper is readable.", "Randomised election timeouts solve split votes simply.", "Kafka's newer metadata quorum uses a Raft variant."],
         links=["Kafka", "Dynamo paper"]),
    dict(title="Dynamo paper", author="Giuseppe DeCandia et al.", year=2007, type="paper", status="read", rating=4, rec=None,
         how="'Dynamo: Amazon's Highly Available Key-value Store', SOSP 2007.",
         summary="Amazon's key-value store for the shopping cart, built to always accept writes. Consistent hashing with virtual nodes for partitioning, vector clocks for versioning, sloppy quorums and hinted handoff for availability during failures, Merkle trees for anti-entropy, gossip for membership.",
         takeaways=["Availability over consistency was a business decision: never refuse an add-to-cart.", "Conflict resolution is pushed to the application.", "Many later databases copied the design."],
         links=["Consistent hashing", "Vector clocks", "CRDT"]),
    dict(title="Kafka paper", author="Jay Kreps, Neha Narkhede and Jun Rao", year=2011, type="paper", status="read", rating=4, rec="Tomasz Wieczorek",
         how="'Kafka: a Distributed Messaging System for Log Processing', NetDB 2011. Tomasz sent it before the broker migration.",
         summary="LinkedIn's log-based messaging system: topics split into partitions, each an append-only log on disk; consumers track their own offsets and pull; brokers are stateless about consumers; sequential disk access and the operating system's page cache make it fast.",
         takeaways=["Letting consumers keep their own position is what makes replay cheap.", "Pull-based consumption gives natural backpressure.", "The 2011 design had no replication; that came later."],
         links=["Kafka", "Consumer lag"]),
    dict(title="CRDT paper", author="Marc Shapiro, Nuno Preguiça, Carlos Baquero and Marek Zawirski", year=2011, type="paper", status="read", rating=4, rec=None,
         how="'Conflict-free Replicated Data Types', SSS 2011. Read while looking at offline edits in the driver app.",
         summary="Defines state-based and operation-based replicated data types that converge without coordination, gives the conditions (a join semilattice for state-based, commutative concurrent operations for op-based) and a catalogue: counters, registers, sets, graphs.",
         takeaways=["Strong eventual consistency is achievable for a useful set of types.", "Observed-remove sets handle add and remove sensibly.", "Garbage collection of metadata is the practical problem."],
         links=["CRDT", "Mooring"]),
    dict(title="Article - Stripe-like idempotency keys in Postgres", author="Brandur Leach", year=2017, type="article", status="read", rating=5, rec="Yusuf Demir",
         how="Yusuf's favourite article; he built the billing service around it.",
         summary="How to implement idempotency keys for an API with side effects using Postgres: store each key with the request and the progress through 'atomic phases', recover from any crash by resuming at the last completed phase, and make foreign calls idempotent too.",
         takeaways=["Split a request into atomic phases with recovery points.", "Keys should expire, but only after retries have stopped.", "A completion job cleans up requests abandoned mid-way."],
         links=["Idempotency keys", "Capstan"]),
    dict(title="Paper - Stability budgets in pharmaceutical transport", author="Hannah Pohl et al.", year=2021, type="paper", status="read", rating=4, rec="Hannah Pohl",
         how="Hannah's own paper; she sent the preprint after our lunch in 2024.",
         summary="Proposes replacing fixed allowable-excursion times with a stability budget per product: the total degradation a product may accumulate across its whole distribution, computed from stability data, with each leg consuming part of it. Case studies on three vaccines show fixed limits are too strict for short warm spells and too lenient for repeated ones.",
         takeaways=["A budget is shared along the chain; our leg is one consumer of it.", "Needs manufacturers to share stability data, which they rarely do.", "A good long-term direction for our alert rules."],
         links=["Temperature excursion", "Mean kinetic temperature"]),
    dict(title="Enterprise Integration Patterns", author="Gregor Hohpe and Bobby Woolf", year=2003, type="book", status="read", rating=4, rec="Tomasz Wieczorek",
         how="Old but still the reference for messaging vocabulary; Tomasz keeps a copy on his desk and points at it during design reviews.",
         summary="A catalogue of 65 patterns for connecting applications with asynchronous messaging: message channels, routers, translators and endpoints, with names that became the common language of integration — content-based router, dead letter channel, idempotent receiver, guaranteed delivery, competing consumers, message store.",
         takeaways=["Name the pattern and half the design discussion is done.", "Every channel needs an answer for messages that cannot be processed.", "The idempotent receiver pattern is older than most of the frameworks that reinvent it."],
         links=["Dead letter queue", "Idempotency keys", "RabbitMQ"]),
    dict(title="Salt Fat Acid Heat", author="Samin Nosrat", year=2017, type="book", status="read", rating=5, rec=None,
         how="Cookbook that is really a cooking course.",
         summary="Organises cooking around four elements: salt (season early and enough), fat (flavour and texture), acid (balance and brightness) and heat (how and when). Fewer recipes than most cookbooks, more reasoning, with illustrations instead of photos.",
         takeaways=["Salt the pasta water like the sea, and salt meat the day before.", "When a dish tastes flat, it usually needs acid, not salt.", "The buttermilk chicken is as good as everyone says."],
         links=["Life MOC", "Shakshuka"]),
    dict(title="Kitchen Confidential", author="Anthony Bourdain", year=2000, type="book", status="read", rating=4, rec=None, nolinks=True,
         how="Re-read after a documentary about him.",
         summary="A chef's memoir of restaurant kitchens in New York: the culture, the hours, the drugs, the camaraderie and a few warnings about ordering fish on Mondays. Funny and sad in equal measure.",
         takeaways=["Mise en place as a way of life.", "Kitchens are teams under pressure with a strong shared language.", "Still the best description of service as a performance."],
         links=[]),
    dict(title="Мастер и Маргарита", author="Михаил Булгаков", year=1967, type="book", status="read", rating=5, rec="Dmitri Volkov", lang="ru",
         how="Перечитал по-русски по совету [[Dmitri Volkov|Димы]], с его старым изданием и словарём под рукой.",
         summary="Роман о визите дьявола, Воланда, и его свиты в Москву тридцатых годов, переплетённый с историей Понтия Пилата и любовной историей Мастера и Маргариты. Сатира на советский литературный мир и быт, и одновременно книга о трусости, милосердии и свободе.",
         takeaways=["«Рукописи не горят».", "Кот Бегемот — лучший второстепенный персонаж, которого я знаю.", "По-русски гораздо смешнее, чем в переводе.", "Главы о Пилате читаются как отдельная книга; Дима советует перечитать их отдельно."],
         links=[]),
    dict(title="Thinking, Fast and Slow", author="Daniel Kahneman", year=2011, type="book", status="read", rating=4, rec=None, nolinks=True,
         how="Read years ago; notes rewritten from my old paper notebook.",
         summary="Two modes of thought, fast intuitive System 1 and slow deliberate System 2, and the biases that come from relying on the first: anchoring, availability, loss aversion, the planning fallacy, and the difference between the experiencing and the remembering self.",
         takeaways=["The planning fallacy: use the outside view, the base rate of similar projects.", "Anchors work even when they are obviously random.", "Some replication problems in the priming chapters; read those with care."],
         links=[]),
    dict(title="The Design of Everyday Things", author="Don Norman", year=1988, type="book", status="read", rating=4, rec="Beatriz Lobo",
         how="Beatriz made me read it after I designed a settings page.",
         summary="Why people struggle with doors, stoves and software: poor affordances and signifiers, bad mappings, missing feedback, and designers who blame users for errors the design invited. Human error is usually design error.",
         takeaways=["If people need a label to use a door, the door is wrong.", "Design for slips and mistakes, not for perfect users.", "Feedback must be immediate and informative."],
         links=["Mooring", "Tiller"]),
]

HOW_HEAD = ["", "", "How I got it", "Context"]
SUM_HEAD = ["Summary", "What it is about", "Gist", "In a nutshell"]
TAKE_HEAD = ["Takeaways", "What stuck", "Notes", "Key ideas"]
CONN_HEAD = ["Connections", "Related notes", "Links"]
RU_HEAD = ("О чём", "Что запомнилось")
VERDICT = {
    5: ["«One of the few books I push on everyone.|Would re-read, and probably will.|Changed how I think about my work.» «I bought a second copy to lend out.|It earned its place on the shelf at work.|Worth every hour.»"],
    4: ["«Very good,|Strong,|Good book,» «with a slow middle part|though longer than it needs to be|with a few chapters I skimmed»«.|; the good parts are very good.|; would recommend with caveats.»"],
    3: ["«Fine.|Decent.|Worth a look.» «I expected more after the hype.|Some good ideas, a lot of padding.|Half of it could have been an essay.»"],
    None: ["«Not finished yet.|Still going.|Halfway.» «Will update the notes when done.|Reading a chapter at a time.|Slow going, in a good way.»"],
}
WHEN = ["«Read|Finished it|Got through it» «over about two weeks|in a month of evenings|on two flights|over the Christmas break|on the train to work»«.|, mostly in bed.|, with a pencil.»",
        "«Took notes on paper|Highlighted a lot|Kept a list of page numbers» «and typed them up here|and this is the cleaned-up version|and kept only what still seemed true a month later».",
        ""]
RU_VERDICT = "«Читал медленно, по главе в день.|Прочитал за две недели.|Читал в поезде и перед сном.» «Обязательно перечитаю.|Одна из любимых книг.|Теперь понимаю, почему все её цитируют.»"


def register(ctx):
    for r in READING:
        ctx.add("Reading", r["title"], "reading").data = r


def write(ctx):
    for r in READING:
        n = ctx.get(r["title"])
        rng = n.rng()
        fm = [("author", r["author"]), ("year", r["year"]), ("type", r["type"]), ("status", r["status"])]
        if r.get("rating"):
            fm.append(("rating", r["rating"]))
        if r.get("rec") and not r.get("nolinks"):
            fm.append(("recommended_by", link(r["rec"])))
        fm.append(("tags", ["reading", r["type"]]))
        n.frontmatter = fm
        blocks = [f"# {r['title']}"]
        line = f"*{r['author']}, {r['year']}*"
        if r.get("rating"):
            line += rng.choice([f" — {r['rating']}/5", f" · rating {r['rating']}/5", f" ({'★' * r['rating']})"])
        blocks.append(line)
        how = r["how"]
        if r.get("rec") and not r.get("nolinks") and r.get("lang") != "ru":
            how += " " + rng.choice(["Recommended by {p}.", "Recommendation from {p}.", "({p}'s recommendation.)"]).format(p=link(r["rec"]))
        head = rng.choice(HOW_HEAD)
        blocks.append(f"## {head}\n\n{how}" if head else how)
        if r.get("lang") == "ru":
            blocks.append(f"## {RU_HEAD[0]}\n\n{r['summary']}")
            blocks.append(f"## {RU_HEAD[1]}\n\n" + bullets(r["takeaways"]))
        else:
            blocks.append(f"## {rng.choice(SUM_HEAD)}\n\n{r['summary']}")
            blocks.append(f"## {rng.choice(TAKE_HEAD)}\n\n" + bullets(r["takeaways"]))
        if r.get("lang") == "ru":
            blocks.append("## Впечатление\n\n" + ctx.expand(rng, RU_VERDICT))
        else:
            verdict = ctx.expand(rng, rng.choice(VERDICT[r.get("rating")]))
            when = ctx.expand(rng, rng.choice(WHEN)) if r["status"] == "read" else ""
            blocks.append(f"## {rng.choice(['Verdict', 'My take', 'Would I recommend it'])}\n\n" + " ".join(x for x in (when, verdict) if x))
        if r["links"]:
            blocks.append(f"## {rng.choice(CONN_HEAD)}\n\n" + bullets([link(x) for x in r["links"]]))
        n.body = sections(blocks)
