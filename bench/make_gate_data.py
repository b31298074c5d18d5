# ruff: noqa: E501  (templates read best one per line)
"""Write the template-expanded part of the local gate's training data, reproducibly.

    python bench/make_gate_data.py [--eval-dir ../shared/eval]
                                          # rewrites the origin=template rows of gate_train.jsonl

The hand-written rows of `assistant/data/gate_train.jsonl` are kept; this script drops
the rows it wrote before (`"origin": "template"`) and appends new ones. Any row, hand-
written or generated, within MiniLM cosine 0.88 of a message of our fresh test sets or of
the external gate sets (when `--eval-dir` has them) is dropped.
Every template, word list and name below was written for this project (no message is
copied or paraphrased from any evaluation set). Templates are expanded with a seeded RNG
and varied in casing, punctuation and typos the same way for both labels, so those
surface cues carry no label.

Split: a whole template goes to `heldout` (about one in five, by a stable hash of its
text) or to `train`, so the held-out split measures templates the model never saw,
not new slot fillers in familiar sentences.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "assistant" / "data" / "gate_train.jsonl"
SEED = 20241129
HELDOUT_SHARE = 5  # one template in five
# The unseen test sets: training rows too close to any of them are dropped.
FRESH = sorted((ROOT / "assistant" / "data").glob("gate_fresh*_test.jsonl"))
NEAR_DUPLICATE = 0.88  # cosine at or above which a generated row counts as a copy

# --- people -------------------------------------------------------------------------------
# Ordinary given names from many cultures (the people a user knows).
NAMES = """
Aaliyah Abebe Adaeze Adebayo Afua Agnieszka Ahmad Aiko Ailbhe Akira Alejandro Aleksander
Alessia Amara Amelie Anders Andile Anouk Antoine Anya Arash Arjun Astrid Ayesha Aylin
Babajide Bartek Beatriz Bilal Birgit Bongani Bruno Callum Camila Carys Cem Chidi Chinedu
Chiara Ciaran Cosmin Dalia Damla Dariusz Deepa Delphine Dilnoza Dimitra Duc Efua Eilidh
Eitan Ekaterina Elif Emeka Emre Eszter Fabian Farah Farid Fenna Fernanda Finn Folake
Gaurav Gideon Giulia Goran Greta Gulnara Hamza Hana Hannele Haruto Hedda Hiroko Huong
Ifeoma Ilse Imani Ines Ingrid Ioana Isak Jakub Jana Javier Jelena Jiho Joaquin Jonas
Jorge Junaid Kaito Kalani Kamala Karim Kasia Kemal Kenji Keoni Khadija Kiran Kofi Laleh
Lars Leila Lorenzo Luca Lucia Luisa Mahmoud Malak Malia Mandla Manon Marek Mariam Marisol
Matteo Mehmet Meera Mihai Milan Minh Mirela Moana Mohsen Nadia Nandi Naoko Neha Nikolai
Nils Nkechi Noor Nuno Obinna Oksana Olamide Ole Oluwaseun Omar Oren Paloma Pania Pedro
Pieter Preeti Quang Rafael Rania Ravi Reza Rhiannon Rohan Roksana Rosa Rui Saanvi Sadia
Sakura Salma Sander Santiago Saoirse Seo-yeon Shira Sibusiso Sina Sione Siti Solveig
Sunil Svetlana Tae-yang Tamar Tanvir Tariq Tendai Thabo Thandeka Tiago Tomasz Tove Ugo
Valentina Vanja Vikram Vivek Wanjiru Xiadani Yara Yasmin Yerlan Yosef Yuna Yusuf Zainab
Zaid Zanele Zeynep Zofia Aroha Bodhi Caoimhe Daan Elodie Florin Henrik Ileana Jovana
Kwabena Liesel Mateus Nomvula Orla Pilar Radu Sigrid Tupac Ulla Wren Ximena Yannick
Kate Tom Sarah Mike Jen Dave Lisa Chris Emma Ben Rachel Dan Amy Josh Laura Sam Megan
Priya Marco Lena Carlos Mei Raj Anna Leo Sofia Ali Maya Nick Zoe Alex Jess Ryan Kim
""".split()

REL = (
    "sister brother mom dad wife husband partner son daughter boss coworker roommate "
    "neighbour grandma grandpa aunt uncle cousin best friend girlfriend boyfriend niece "
    "nephew mother-in-law therapist trainer landlord manager kid"
).split()

# (singular, plural) things people like, recommend and ask about.
CATS = [
    ("movie", "movies"),
    ("book", "books"),
    ("song", "songs"),
    ("band", "bands"),
    ("painter", "painters"),
    ("podcast", "podcasts"),
    ("restaurant", "restaurants"),
    ("recipe", "recipes"),
    ("game", "games"),
    ("TV show", "TV shows"),
    ("exercise", "exercises"),
    ("hobby", "hobbies"),
    ("artist", "artists"),
    ("author", "authors"),
    ("album", "albums"),
    ("sport", "sports"),
    ("cuisine", "cuisines"),
    ("hiking trail", "hiking trails"),
    ("board game", "board games"),
    ("app", "apps"),
    ("documentary", "documentaries"),
    ("flower", "flowers"),
    ("snack", "snacks"),
    ("dessert", "desserts"),
    ("musician", "musicians"),
    ("poet", "poets"),
    ("kind of music", "kinds of music"),
    ("workout", "workouts"),
    ("study technique", "study techniques"),
    ("houseplant", "houseplants"),
    ("wine", "wines"),
    ("tea", "teas"),
    ("video game", "video games"),
    ("novel", "novels"),
    ("museum", "museums"),
    ("city", "cities"),
    ("beach", "beaches"),
    ("coffee shop", "coffee shops"),
    ("breathing exercise", "breathing exercises"),
    ("skincare product", "skincare products"),
    ("comedian", "comedians"),
    ("cocktail", "cocktails"),
    ("yoga pose", "yoga poses"),
    ("anime", "anime"),
    ("sci-fi series", "sci-fi series"),
    ("running shoe", "running shoes"),
    ("camping spot", "camping spots"),
    ("language app", "language apps"),
    ("jazz record", "jazz records"),
    ("classical piece", "classical pieces"),
]

# Things the user may have told the assistant about (after "my").
MY_THINGS = (
    "trip to Portugal|new job|sister's wedding|job interview|back pain|garden|diet|"
    "apartment hunt|driving test|thesis|cat|dog|startup idea|piano lessons|marathon training|"
    "sleep problems|exam results|promotion|knee surgery|budget|move to Berlin|"
    "relationship|dating life|side project|novel draft|vegetable patch|car trouble|"
    "argument with my brother|kid's school|allergies|work schedule|new bike|savings plan|"
    "birthday plans|fear of flying|language lessons|volunteer work|band practice|"
    "holiday plans|therapy sessions|presentation|camping trip|house renovation|"
    "pottery class|reading challenge|fitness goals|coffee habit|anxiety|mortgage"
).split("|")

PAST_ACTS = (
    "go to the climbing gym|sign up for the half marathon|adopt the puppy|move to Leeds|"
    "start learning the cello|visit the lake house|finish the kitchen renovation|"
    "join the book club|take the cooking class|go camping with the kids|get the promotion|"
    "paint the mural|run the charity 10k|travel to Peru|buy the new bike|quit smoking|"
    "open the bakery|start volunteering at the food bank|graduate|break an arm|"
    "get married|pick up surfing|go to that concert|plant the vegetable garden|"
    "start therapy|go to the family reunion|win the chess tournament|host the barbecue|"
    "fly to Seoul|learn to drive|change careers|get back from Lisbon|start the podcast|"
    "finish writing the short story|sell the old car|rescue the kitten|"
    "visit the grandparents|go to the support group|take up pottery|start the new job|"
    "go back to school|run into the ex|get the tattoo|move in together|"
    "go to the art exhibition|try the new ramen place|lose the wallet|"
    "get the scholarship|start the YouTube channel|go on the road trip|"
    "see the doctor about the headaches|join the choir|buy the house|"
    "go to the beach with the family|attend the conference in Nairobi|"
    "finish the first sculpture|apply for the visa|go to the pride march|"
    "start the knitting group|get the braces off|take the kids to the zoo"
).split("|")

LIKES = (
    "like to paint|do to relax|collect|like to cook|do on weekends|"
    "listen to while running|do for work|like to read|play on Friday nights|"
    "grow in the garden|bake for parties|watch with the kids|study at university|"
    "write about|do for fun|eat for breakfast|make with clay|volunteer for|"
    "like about the new city|miss about home"
).split("|")

HYPOS = (
    "enjoy a trip to Iceland|like a jazz concert|want to adopt another pet|"
    "go back to university|move abroad|be interested in a cooking class|"
    "pursue a career in counselling|prefer a quiet weekend|enjoy a hiking holiday|"
    "consider running for the local council|want to write a memoir|"
    "be a good fit for a teaching job|still be into skateboarding|"
    "want a big wedding|like the new Thai place|be open to a road trip|"
    "take up photography|enjoy a book about space|be considered religious|"
    "want more kids"
).split("|")

JOINT = (
    "meet|go on their first trip|argue about|celebrate the anniversary|"
    "start the business|go to the festival|adopt the dog|take the dance class|"
    "visit the museum|paint together|move house|go hiking last time"
).split("|")

TOPICS = (
    "the new job|moving to the coast|the wedding plans|the neighbour's noise|"
    "the school play|the house prices|going vegan|the trip to Kenya|the new manager|"
    "her mother's health|the pottery class|the adoption process|the election|"
    "the marathon|learning Spanish|the rent increase|the baby's name|the gym"
).split("|")

EVENTS = (
    "dentist appointment|flight|haircut|team offsite|parent-teacher meeting|yoga class|"
    "dinner reservation|doctor's appointment|job interview|piano recital|"
    "car service|therapy session|book club|vet appointment|date night|"
    "anniversary dinner|performance review|moving day|driving lesson|housewarming"
).split("|")

DAYS = (
    "on Friday|tomorrow|next week|this weekend|on Tuesday|tonight|next month|"
    "on the 14th|after work|in March|on Sunday morning|later today"
).split("|")

WHENS = (
    "last week|yesterday|a few days ago|last month|the other day|on Monday|"
    "in our last chat|earlier|last time we talked|recently|this morning|back in April"
).split("|")

# --- famous people and fictional characters -----------------------------------------------
FAMOUS = """
Albert Einstein|Marie Curie|Leonardo da Vinci|Frida Kahlo|Nelson Mandela|Mahatma Gandhi|
Martin Luther King Jr.|Abraham Lincoln|Cleopatra|Napoleon|Julius Caesar|Queen Victoria|
Winston Churchill|Isaac Newton|Charles Darwin|Galileo|Nikola Tesla|Thomas Edison|
Ada Lovelace|Alan Turing|Rosa Parks|Harriet Tubman|Genghis Khan|Joan of Arc|
William Shakespeare|Jane Austen|Leo Tolstoy|Toni Morrison|Gabriel Garcia Marquez|
Chinua Achebe|Haruki Murakami|Virginia Woolf|Mark Twain|Charles Dickens|Homer|
Mozart|Beethoven|Bach|Chopin|Michael Jackson|Elvis Presley|Freddie Mercury|
Bob Marley|Whitney Houston|Taylor Swift|Beyoncé|Rihanna|Adele|BTS|The Beatles|
David Bowie|Aretha Franklin|Fela Kuti|Ravi Shankar|Pablo Picasso|Vincent van Gogh|
Claude Monet|Michelangelo|Rembrandt|Salvador Dalí|Yayoi Kusama|Andy Warhol|
Serena Williams|Usain Bolt|Pelé|Lionel Messi|Cristiano Ronaldo|Muhammad Ali|
Michael Jordan|Simone Biles|Roger Federer|Sachin Tendulkar|Eliud Kipchoge|
Barack Obama|Angela Merkel|Margaret Thatcher|Jacinda Ardern|Vladimir Putin|
Steve Jobs|Bill Gates|Elon Musk|Oprah Winfrey|Walt Disney|Charlie Chaplin|
Marilyn Monroe|Audrey Hepburn|Meryl Streep|Bruce Lee|Jackie Chan|Shah Rukh Khan|
Sigmund Freud|Karl Marx|Confucius|Plato|Aristotle|Socrates|Buddha|Neil Armstrong|
Yuri Gagarin|Amelia Earhart|Stephen Hawking|Jane Goodall|Malala Yousafzai|
Greta Thunberg|Florence Nightingale|Catherine the Great|Henry VIII|Tutankhamun|
Hokusai|Akira Kurosawa|Hayao Miyazaki|Bong Joon-ho|Agatha Christie|J.K. Rowling|
Ernest Hemingway|Maya Angelou|Nina Simone|Louis Armstrong|Dolly Parton
""".replace("\n", "").split("|")

FICTIONAL = """
Harry Potter|Hermione Granger|Ron Weasley|Frodo Baggins|Gandalf|Sherlock Holmes|
Elizabeth Bennet|Mr. Darcy|Jay Gatsby|Atticus Finch|Katniss Everdeen|Darth Vader|
Luke Skywalker|Jon Snow|Daenerys Targaryen|Homer Simpson|Walter White|Elsa|
Captain Ahab|Don Quixote|Anna Karenina|Jane Eyre|Hamlet|Romeo|Juliet|Macbeth|
Batman|Spider-Man|Wonder Woman|Superman|Mickey Mouse|Pikachu|Mario|Lara Croft|
Dracula|Frankenstein's monster|Winnie the Pooh|Peter Pan|Alice in Wonderland|
Tony Stark|Bilbo Baggins|Aragorn|Dumbledore|Severus Snape|Holden Caulfield|
Scarlett O'Hara|Hercule Poirot|Miss Marple|James Bond|Indiana Jones|Shrek|
Mulan|Simba|Totoro|Naruto|Goku|Geralt of Rivia|Ellen Ripley
""".replace("\n", "").split("|")

# --- general knowledge ------------------------------------------------------------------------
BOOKS = (
    "the great gatsby|war and peace|things fall apart|pride and prejudice|the hobbit|"
    "to kill a mockingbird|one hundred years of solitude|the catcher in the rye|"
    "the handmaid's tale|brave new world|moby dick|the kite runner|beloved|"
    "the alchemist|crime and punishment|the road|dune|frankenstein|jane eyre|"
    "the little prince|norwegian wood|the color purple|1984|animal farm|ulysses"
).split("|")
FILMS = (
    "jaws|the godfather|parasite|spirited away|titanic|inception|black panther|"
    "the matrix|casablanca|pulp fiction|jurassic park|the lion king|avatar|"
    "seven samurai|amelie|la la land|the shawshank redemption|gladiator|"
    "everything everywhere all at once|the dark knight|coco|get out|frozen"
).split("|")
COUNTRIES = (
    "peru|kenya|mongolia|portugal|vietnam|new zealand|canada|ghana|norway|chile|"
    "indonesia|egypt|australia|brazil|japan|iceland|morocco|nepal|argentina|poland|"
    "nigeria|sweden|colombia|thailand|ireland|turkey|india|mexico|finland|ethiopia"
).split("|")
LANDMARKS = (
    "the eiffel tower|machu picchu|the great wall of china|petra|angkor wat|"
    "the taj mahal|mount kilimanjaro|the colosseum|stonehenge|victoria falls|"
    "the statue of liberty|the sydney opera house|chichen itza|uluru|the acropolis|"
    "table mountain|mount fuji|the burj khalifa|niagara falls|the alhambra"
).split("|")
HIST = (
    "the french revolution|world war 2|the fall of the roman empire|the cold war|"
    "the moon landing|the black death|the american civil war|the russian revolution|"
    "the industrial revolution|the battle of hastings|the partition of india|"
    "the building of the pyramids|the printing press|the apollo 13 mission|"
    "the first olympic games|the berlin airlift|the gold rush|the spanish flu"
).split("|")
ELEMENTS = "gold|silver|iron|sodium|potassium|lead|tin|mercury|helium|oxygen|copper|zinc".split("|")
INVENTIONS = (
    "the light bulb|the telephone|the internet|the airplane|penicillin|the radio|"
    "the steam engine|the printing press|television|the bicycle|the microwave|"
    "the computer mouse|the zipper|velcro|the refrigerator|the camera"
).split("|")
SPORTS_EVENTS = (
    "the world cup|the super bowl|wimbledon|the tour de france|the nba finals|"
    "the champions league|the cricket world cup|the stanley cup|the boston marathon|"
    "the rugby world cup"
).split("|")
SONGS = (
    "bohemian rhapsody|hotel california|rolling in the deep|respect|imagine|"
    "purple rain|smells like teen spirit|billie jean|dancing queen|wonderwall|"
    "no woman no cry|hey jude|despacito|gangnam style|halo|africa|zombie"
).split("|")
CONCEPTS = (
    "photosynthesis|inflation|black holes|the stock market|compound interest|"
    "machine learning|the water cycle|plate tectonics|democracy|vaccines|"
    "blockchain|quantum computing|the greenhouse effect|supply and demand|"
    "natural selection|gravity|the immune system|recursion|entropy|jet lag"
).split("|")

# --- small talk -----------------------------------------------------------------------------
FEELINGS = (
    "bored|tired|sad|happy|lonely|stressed|excited|grumpy|anxious|sleepy|hungry|"
    "cranky|down|overwhelmed|restless|nervous|in a good mood|meh|fed up|exhausted|"
    "heartbroken|annoyed|so done|cheerful|blah"
).split("|")
YOU_ADJ = (
    "funny|smart|the best|sweet|boring|annoying|weird|cute|amazing|so helpful|useless|"
    "my favourite|a good listener|kind|hilarious|creepy|cool|awesome|a genius|lovely|"
    "so patient|adorable|the worst|too slow|a good friend"
).split("|")
BOT_VERBS = (
    "sleep|dream|eat|get bored|get tired|have feelings|like music|have a family|"
    "get lonely|like me|ever get sad|have friends|watch movies|know any jokes|"
    "like your job|believe in ghosts|like cats or dogs|have a name|fall in love"
).split("|")
BOT_ROLES = "friend|best friend|girlfriend|boyfriend|buddy|pen pal|valentine|therapist".split("|")

# --- self-contained tasks ------------------------------------------------------------------
INSTR = (
    "Summarize the following text|Translate this into Spanish|Fix the grammar in this|"
    "What is the main idea of this passage?|Classify the tone of this text|"
    "Rewrite this in simpler words|Make this sound more formal|Give this a title|"
    "List the names mentioned in this text|Turn this into bullet points|"
    "Is this review positive or negative?|Extract the key facts from this|Proofread this|"
    "Shorten this to one sentence|Identify any spelling mistakes|"
    "Write a reply to this message|What question does this text answer?|"
    "Rewrite this as a tweet|Find the verbs in this paragraph|Continue this story"
).split("|")
PASTES = [
    "The museum will close for renovations from June to September. Visitors with annual "
    "passes will receive a three-month extension.",
    "Hi team, the quarterly review has moved to Thursday at 3pm. Please bring your "
    "updated figures and a short summary of blockers. Thanks, Marta",
    "I ordered the blue jacket in medium but received a red one in large. The return "
    "process took three weeks and nobody answered my emails.",
    "Once upon a time a fox found a golden key under an old oak tree. She did not know "
    "which door it opened, so she set off to find out.",
    "Researchers found that people who walked 8,000 steps a day slept better than those "
    "who walked fewer than 4,000.",
    "Dear Mr. Okafor, thank you for your application. We are pleased to invite you to an "
    "interview on 12 May at our Lagos office.",
    "This blender is loud, but it crushes ice in seconds and is easy to clean. Five stars.",
    "The river flooded twice this spring, and the town council has voted to build a new "
    "levee along the east bank before winter.",
    "Kai and Leilani opened their surf school in 2015. Today it employs twelve "
    "instructors and teaches over a thousand students every summer.",
    "its been raining all week and the garden is a mess, the tomatoes have split and "
    "the snails ate all the lettuce",
    "Our new app lets you split bills with friends, track shared expenses and settle up "
    "with one tap.",
    "The hotel was fine. The room was small but clean, breakfast was average, and the "
    "staff were friendly.",
    "In 1969, two astronauts walked on the Moon while a third orbited above them in the "
    "command module.",
    "Please be advised that the parking garage on 5th Street will be closed Monday for "
    "resurfacing.",
    "Anita wanted to be a pilot, but her family could not afford lessons, so she saved "
    "for six years working in a bakery.",
    "def total(xs):\n    s = 0\n    for x in xs:\n        s += x\n    return s / len(xs)",
    "SELECT customer_id, COUNT(*) FROM orders GROUP BY customer_id HAVING COUNT(*) > 5;",
    "Me and my friend goes to the park every days and we plays football until it get dark.",
    "Bananas are berries, but strawberries are not. Botanically, a berry develops from a "
    "single flower with one ovary.",
    "Water boils at lower temperatures at high altitude because the air pressure is lower.",
    "Join us Saturday for the neighbourhood clean-up! Gloves and bags provided. Meet at "
    "the library at 9.",
    "The startup raised $4 million to build batteries from sodium instead of lithium.",
    "Tomas's grandmother taught him to make dumplings every Sunday; now he runs a small "
    "restaurant in Krakow.",
    "The quick brown fox jumps over the lazy dog.",
    "Customers who bought the premium plan reported 30% fewer support tickets.",
    "I think the ending of the film was rushed, but the music and the acting were superb.",
    "for i in range(5)\n    print(i)",
    "Attention all staff: the fire drill is scheduled for Wednesday at 10:30.",
    "The novel follows three sisters who inherit a vineyard in Chile and must decide "
    "whether to sell it.",
    "Yesterday the price of coffee beans rose to its highest level in a decade after a "
    "poor harvest in Brazil.",
]
WRITE_FORMS = (
    "poem|haiku|limerick|short story|song|slogan|joke|riddle|tweet|product description".split("|")
)
WRITE_TOPICS = (
    "the ocean|a lost umbrella|autumn|a robot learning to cook|coffee|a city at night|"
    "a brave snail|friendship|the first day of spring|a haunted library|mountains|"
    "a lazy cat|time travel|a thunderstorm|a dragon who is afraid of fire|bicycles"
).split("|")
HOWTOS = (
    "boil an egg|change a flat tyre|tie a tie|remove a red wine stain|write a cover letter|"
    "start a compost heap|center a div in css|make sourdough starter|unclog a drain|"
    "fold a fitted sheet|back up an iphone|improve my posture|negotiate a salary|"
    "learn to juggle|make cold brew|reverse a string in python|get rid of fruit flies"
).split("|")


def _t(kind: str, label: bool, n: int, pattern: str) -> tuple[str, bool, int, str]:
    return (kind, label, n, pattern)


TEMPLATES = [
    # ---- positives: ordinary people the user knows, third person ---------------------
    _t("known", True, 40, "When did {N} {ACT}?"),
    _t("known", True, 25, "Why did {N} {ACT}?"),
    _t("known", True, 25, "Did {N} {ACT}?"),
    _t("known", True, 20, "Where did {N} {ACT}?"),
    _t("known", True, 20, "Who did {N} {ACT} with?"),
    _t("known", True, 15, "How did {N} feel after they {ACT_PAST}?"),
    _t("known", True, 30, "What does {N} {LIKE}?"),
    _t("known", True, 25, "What is {N}'s favourite {C}?"),
    _t("known", True, 25, "What kind of {C} does {N} enjoy?"),
    _t("known", True, 20, "Which {CP} has {N} been into lately?"),
    _t("known", True, 20, "What did {N} think about {TOPIC}?"),
    _t("known", True, 20, "What did {N} say about {TOPIC}?"),
    _t("known", True, 20, "What did {N} and {M} {JOINT}?"),
    _t("known", True, 20, "When did {N} and {M} {JOINT}?"),
    _t("known", True, 25, "Would {N} {HYPO}?"),
    _t("known", True, 20, "Would {N} likely {HYPO}?"),
    _t("known", True, 15, "How many {CP} has {N} tried so far?"),
    _t("known", True, 15, "What happened with {N}'s {MY}?"),
    _t("known", True, 20, "Where does {N}'s {R} live?"),
    _t("known", True, 15, "What is the name of {N}'s {R}?"),
    _t("known", True, 15, "How is {N} doing with {TOPIC}?"),
    _t("known", True, 15, "Is {N} still thinking about {TOPIC}?"),
    _t("known", True, 15, "What did {N} recommend to {M}?"),
    _t("known", True, 15, "What {C} did {N} get {M} for their birthday?"),
    _t("known", True, 10, "how long has {N} been doing that"),
    _t("known", True, 15, "What made {N} decide to {ACT}?"),
    _t("known", True, 15, "What did my {R} {N} {ACT} for?"),
    _t("known", True, 15, "Has {N} told me when they {ACT_PAST}?"),
    # ---- positives: first-person questions to a companion that remembers --------------
    _t("companion", True, 30, "What {CP} did you recommend to me?"),
    _t("companion", True, 25, "Which {CP} did you suggest I try?"),
    _t("companion", True, 25, "What kind of {CP} do I like?"),
    _t("companion", True, 20, "What {CP} do I like?"),
    _t("companion", True, 20, "What's my favourite {C}?"),
    _t("companion", True, 20, "Do you remember my favourite {C}?"),
    _t("companion", True, 25, "What did I tell you about my {MY}?"),
    _t("companion", True, 20, "Do you remember what I said about my {MY}?"),
    _t("companion", True, 20, "How did my {MY} go?"),
    _t("companion", True, 15, "Have I told you about my {MY}?"),
    _t("companion", True, 20, "What advice did you give me about my {MY}?"),
    _t("companion", True, 15, "What was the {C} you mentioned to me {WHEN}?"),
    _t("companion", True, 15, "Remind me which {CP} I said I liked."),
    _t("companion", True, 15, "Which {CP} have I already tried?"),
    _t("companion", True, 15, "What did I say about {N} {WHEN}?"),
    _t("companion", True, 15, "What was I worried about {WHEN}?"),
    _t("companion", True, 15, "What did we chat about {WHEN}?"),
    _t("companion", True, 15, "Did I ever tell you why I {ACT_PAST}?"),
    _t("companion", True, 15, "what {CP} am i into"),
    _t("companion", True, 15, "Can you list the {CP} I've mentioned?"),
    _t("companion", True, 15, "Based on what you know about me, which {C} would I enjoy?"),
    _t("companion", True, 15, "Any {C} you'd recommend for me?"),
    _t("companion", True, 15, "Got any {CP} that would suit my taste?"),
    _t("companion", True, 15, "What do I usually do when I feel {F}?"),
    _t("companion", True, 10, "Is there a {C} you told me to check out?"),
    _t("companion", True, 10, "You said something about {CP} {WHEN}, what was it?"),
    # ---- positives: the user's own plans, people and events ---------------------------
    _t("plans", True, 25, "When is my {EV}?"),
    _t("plans", True, 20, "What time is my {EV} {DAY}?"),
    _t("plans", True, 15, "Did I book the {EV} for {DAY_BARE}?"),
    _t("plans", True, 15, "Where am I meeting {N} {DAY}?"),
    _t("plans", True, 15, "Is {N} coming to the {EV}?"),
    _t("plans", True, 15, "what's {N}'s address again"),
    _t("plans", True, 15, "Did my {R} call back about {TOPIC}?"),
    _t("plans", True, 15, "What does my {R} want for their birthday?"),
    _t("plans", True, 15, "When does my {R}'s flight land?"),
    _t("plans", True, 10, "remind me what I need to bring to the {EV}"),
    _t("plans", True, 10, "Have I paid {N} back yet?"),
    _t("plans", True, 10, "what did {N} text me {WHEN}"),
    # ---- negatives: famous and fictional people ----------------------------------------
    _t("famous", False, 20, "When was {FAM} born?"),
    _t("famous", False, 20, "What is {FAM} best known for?"),
    _t("famous", False, 15, "Where did {FAM} grow up?"),
    _t("famous", False, 15, "Who was {FAM} married to?"),
    _t("famous", False, 15, "How did {FAM} die?"),
    _t("famous", False, 15, "Why is {FAM} so famous?"),
    _t("famous", False, 15, "What did {FAM} do before becoming famous?"),
    _t("famous", False, 10, "Did {FAM} have any children?"),
    _t("famous", False, 10, "how old was {FAM} when they died"),
    _t("famous", False, 10, "what was {FAM}'s first job"),
    _t("famous", False, 10, "Tell me three facts about {FAM}."),
    _t("famous", False, 10, "Which country was {FAM} from?"),
    _t("fiction", False, 15, "Who is {FIC}'s best friend?"),
    _t("fiction", False, 15, "What happens to {FIC} at the end of the story?"),
    _t("fiction", False, 10, "Why does {FIC} do what they do?"),
    _t("fiction", False, 10, "Where does {FIC} live?"),
    _t("fiction", False, 10, "who created {FIC}"),
    _t("fiction", False, 10, "What is {FIC} afraid of?"),
    # ---- negatives: trivia, often lowercase without a question mark --------------------
    _t("trivia", False, 20, "who wrote {BOOK}"),
    _t("trivia", False, 20, "who directed {FILM}"),
    _t("trivia", False, 15, "when did {HIST} happen"),
    _t("trivia", False, 15, "when did {HIST} end"),
    _t("trivia", False, 20, "where is {LAND}"),
    _t("trivia", False, 20, "what is the capital of {COUNTRY}"),
    _t("trivia", False, 15, "what language is spoken in {COUNTRY}"),
    _t("trivia", False, 15, "population of {COUNTRY}"),
    _t("trivia", False, 15, "who won {SPORT} in {YEAR}"),
    _t("trivia", False, 12, "what is the chemical symbol for {EL}"),
    _t("trivia", False, 15, "how tall is {LAND}"),
    _t("trivia", False, 15, "when was {INV} invented"),
    _t("trivia", False, 15, "who sings {SONG}"),
    _t("trivia", False, 10, "who played the lead in {FILM}"),
    _t("trivia", False, 10, "what year did {FILM} come out"),
    _t("trivia", False, 10, "What is the currency of {COUNTRY}?"),
    _t("trivia", False, 10, "How many people live in {COUNTRY}?"),
    _t("trivia", False, 10, "who built {LAND}"),
    _t("trivia", False, 10, "what caused {HIST}"),
    _t("trivia", False, 15, "explain {CONCEPT} simply"),
    _t("trivia", False, 15, "How does {CONCEPT} work?"),
    _t("trivia", False, 10, "what is {CONCEPT}"),
    # ---- negatives: emotional small talk, no memory needed ------------------------------
    _t("smalltalk", False, 25, "I'm {F}"),
    _t("smalltalk", False, 25, "i'm so {F} today"),
    _t("smalltalk", False, 20, "I feel {F} right now"),
    _t("smalltalk", False, 25, "you're {YA}"),
    _t("smalltalk", False, 15, "you are {YA} lol"),
    _t("smalltalk", False, 25, "do you {BV}?"),
    _t("smalltalk", False, 15, "can you be my {BR}?"),
    _t("smalltalk", False, 10, "will you be my {BR}?"),
    _t("smalltalk", False, 20, "what's your favourite {C}?"),
    _t("smalltalk", False, 15, "do you like {CP}?"),
    _t("smalltalk", False, 10, "ugh I'm {F}, cheer me up"),
    _t("smalltalk", False, 10, "honestly I'm {F} and I don't know why"),
    _t("smalltalk", False, 10, "you're {YA}, you know that?"),
    # ---- negatives: math word problems full of names and numbers -----------------------
    _t(
        "word",
        False,
        20,
        "{N} has {A} apples and buys {B} more. {M} eats {S} of them. How many are left?",
    ),
    _t(
        "word",
        False,
        20,
        "{N} earns ${A} an hour and works {B} hours a week. How much does {N} earn in {S} weeks?",
    ),
    _t(
        "word",
        False,
        15,
        "{N} reads {S} pages a day. The book has {BIG} pages. How many days will it take?",
    ),
    _t(
        "word",
        False,
        15,
        "{N} is {S} years older than {M}. In {B} years their ages add up to {BIG2}. How old is {M} now?",
    ),
    _t(
        "word",
        False,
        15,
        "A bakery sells {A} muffins in the morning and {B} in the afternoon. Each muffin costs ${S}. How much money does it make?",
    ),
    _t(
        "word",
        False,
        15,
        "{N} drives {BIG} km at {A} km per hour. How many hours does the trip take?",
    ),
    _t(
        "word",
        False,
        15,
        "{N} and {M} share {BIG} stickers so that {N} gets {S} times as many as {M}. How many does {M} get?",
    ),
    _t(
        "word",
        False,
        15,
        "There are {A} rows of chairs with {B} chairs in each row. {S} chairs are broken. How many can be used?",
    ),
    _t("word", False, 15, "{N} saves ${A} every week. How many weeks until {N} has ${BIG}?"),
    _t(
        "word",
        False,
        15,
        "{N} bought {S} notebooks for ${A} each and a bag for ${B}. How much did {N} spend?",
    ),
    _t(
        "word",
        False,
        15,
        "A class of {A} students goes on a trip. Each bus holds {S} students. How many buses are needed?",
    ),
    _t(
        "word",
        False,
        10,
        "{N} runs {S} miles on weekdays and {B} miles on Sunday. How many miles in {A} weeks?",
    ),
    _t(
        "word",
        False,
        10,
        "A shirt costs ${BIG} and is on sale for {PCT}% off. {N} buys {S}. What does {N} pay?",
    ),
    _t(
        "word",
        False,
        10,
        "{N}'s garden has {A} tomato plants. Each plant gives {S} tomatoes, and {M} takes {B}. How many are left?",
    ),
    _t("word", False, 10, "what is {A} times {B}"),
    _t("word", False, 10, "{PCT}% of {BIG}?"),
    _t("word", False, 10, "what's {BIG} divided by {S}"),
    # ---- negatives: self-contained tasks, often with pasted input ----------------------
    _t("pasted", False, 40, "{INSTR}:\n\n{PASTE}"),
    _t("pasted", False, 30, "{INSTR}: {PASTE}"),
    _t("pasted", False, 20, "{PASTE}\n\n{INSTR}"),
    _t("pasted", False, 15, '{INSTR}: "{PASTE}"'),
    _t("task", False, 25, "Write a {FORM} about {WT}."),
    _t("task", False, 15, "write me a {FORM} about {WT}"),
    _t("task", False, 20, "How do I {HOW}?"),
    _t("task", False, 10, "how to {HOW}"),
    _t("task", False, 15, "Give me {S} ideas for a {FORM} about {WT}."),
    _t("task", False, 15, "What's the difference between {CONCEPT} and {CONCEPT2}?"),
    _t("task", False, 10, "Suggest a name for a {C} blog."),
    _t("task", False, 10, "Write a short review of a {C} for a magazine."),
    _t("task", False, 10, "Create a quiz with {S} questions about {CONCEPT}."),
    _t("mine_sc", False, 15, "My code has a bug, can you fix it?\n\n{CODE}"),
    _t("mine_sc", False, 15, "Here is my draft, please improve it: {PASTE}"),
    _t("mine_sc", False, 10, "I'm writing a {FORM} about {WT}, can you help me start it?"),
    _t("mine_sc", False, 10, "I need to {HOW}, what's the best way?"),
]

CODES = [p for p in PASTES if "def " in p or "SELECT" in p or "range(" in p]
PAST_TENSE = {
    "go": "went",
    "sign": "signed",
    "adopt": "adopted",
    "move": "moved",
    "start": "started",
    "visit": "visited",
    "finish": "finished",
    "join": "joined",
    "take": "took",
    "get": "got",
    "paint": "painted",
    "run": "ran",
    "travel": "travelled",
    "buy": "bought",
    "quit": "quit",
    "open": "opened",
    "graduate": "graduated",
    "break": "broke",
    "pick": "picked",
    "plant": "planted",
    "win": "won",
    "host": "hosted",
    "fly": "flew",
    "learn": "learned",
    "change": "changed",
    "sell": "sold",
    "rescue": "rescued",
    "lose": "lost",
    "see": "saw",
    "try": "tried",
    "apply": "applied",
    "attend": "attended",
}


def past(act: str) -> str:
    """'go to the gym' -> 'went to the gym' (only the verbs our lists use)."""
    verb, _, rest = act.partition(" ")
    return f"{PAST_TENSE.get(verb, verb + 'ed')} {rest}".strip()


def fill(pattern: str, rng: random.Random) -> str:
    """One expansion of a template."""
    cat = rng.choice(CATS)
    n, m = rng.sample(NAMES, 2)
    act = rng.choice(PAST_ACTS)
    c1, c2 = rng.sample(CONCEPTS, 2)
    values = {
        "N": n,
        "M": m,
        "ACT": act,
        "ACT_PAST": past(act),
        "LIKE": rng.choice(LIKES),
        "C": cat[0],
        "CP": cat[1],
        "TOPIC": rng.choice(TOPICS),
        "JOINT": rng.choice(JOINT),
        "HYPO": rng.choice(HYPOS),
        "MY": rng.choice(MY_THINGS),
        "R": rng.choice(REL),
        "WHEN": rng.choice(WHENS),
        "EV": rng.choice(EVENTS),
        "DAY": rng.choice(DAYS),
        "DAY_BARE": rng.choice(DAYS).replace("on ", ""),
        "F": rng.choice(FEELINGS),
        "FAM": rng.choice(FAMOUS),
        "FIC": rng.choice(FICTIONAL),
        "BOOK": rng.choice(BOOKS),
        "FILM": rng.choice(FILMS),
        "HIST": rng.choice(HIST),
        "LAND": rng.choice(LANDMARKS),
        "COUNTRY": rng.choice(COUNTRIES),
        "SPORT": rng.choice(SPORTS_EVENTS),
        "YEAR": str(rng.randint(1966, 2022)),
        "EL": rng.choice(ELEMENTS),
        "INV": rng.choice(INVENTIONS),
        "SONG": rng.choice(SONGS),
        "CONCEPT": c1,
        "CONCEPT2": c2,
        "YA": rng.choice(YOU_ADJ),
        "BV": rng.choice(BOT_VERBS),
        "BR": rng.choice(BOT_ROLES),
        "A": str(rng.randint(3, 60)),
        "B": str(rng.randint(2, 40)),
        "S": str(rng.randint(2, 9)),
        "BIG": str(rng.randint(8, 90) * 10),
        "BIG2": str(rng.randint(30, 90)),
        "PCT": str(rng.choice([10, 15, 20, 25, 30, 40, 50])),
        "INSTR": rng.choice(INSTR),
        "PASTE": rng.choice(PASTES),
        "FORM": rng.choice(WRITE_FORMS),
        "WT": rng.choice(WRITE_TOPICS),
        "HOW": rng.choice(HOWTOS),
        "CODE": rng.choice(CODES),
    }
    return re.sub(r"\{([A-Z_0-9]+)\}", lambda mt: values[mt.group(1)], pattern)


FILLERS = ("hey, ", "quick question: ", "so ", "um ", "ok so ", "hi! ", "btw ")


def vary(text: str, rng: random.Random, pasted: bool) -> str:
    """Casing, punctuation, filler and typo noise, applied alike to both labels."""
    if pasted:
        return text
    r = rng.random()
    if r < 0.15:
        text = text.lower()
    elif r < 0.22 and len(text) > 1:
        text = text[0].lower() + text[1:]
    if rng.random() < 0.18:
        text = text.rstrip("?.!")
    if rng.random() < 0.06:
        text = rng.choice(FILLERS) + text[0].lower() + text[1:]
    if rng.random() < 0.05:
        words = text.split(" ")
        i = rng.randrange(len(words))
        w = words[i]
        if len(w) > 4 and w.isalpha():
            j = rng.randrange(1, len(w) - 2)
            words[i] = w[:j] + w[j + 1] + w[j] + w[j + 2 :]
            text = " ".join(words)
    if rng.random() < 0.03:
        text = text + "??"
    return text


def split_of(pattern: str) -> str:
    digest = hashlib.sha256(pattern.encode()).digest()
    return "heldout" if digest[0] % HELDOUT_SHARE == 0 else "train"


def generate(hand_written: set[str]) -> list[dict]:
    """All template rows, de-duplicated against each other and the hand-written rows."""
    rng = random.Random(SEED)
    seen = {m.lower() for m in hand_written}
    rows = []
    for kind, label, count, pattern in TEMPLATES:
        made = tries = 0
        while made < count and tries < count * 20:
            tries += 1
            text = vary(fill(pattern, rng), rng, kind in ("pasted", "mine_sc"))
            if text.lower() in seen:
                continue
            seen.add(text.lower())
            made += 1
            rows.append(
                {
                    "message": text,
                    "retrieve": label,
                    "kind": kind,
                    "split": split_of(pattern),
                    "origin": "template",
                }
            )
    return rows


# --- whole messages written one by one (split by message, not by template) ---------------
LISTS = {
    ("trivia", False): """
who plays the dad in the tv show modern family
when does the next season of stranger things come out
who sang lead vocals on the song africa
how many episodes are in season one of the crown
where was the movie mamma mia filmed
who has scored the most goals in premier league history
when did the euro become the currency of germany
what is the longest river in europe
who voiced woody in toy story
how many players are on a water polo team
what is the name of the current pope
who wrote the declaration of independence
when did the first harry potter book come out
where do the olympics take place in 2032
who is the richest person in africa
what does the acronym laser stand for
how many hearts does an octopus have
who played the queen in the favourite
when did women get the vote in switzerland
who is the main character in the legend of zelda
what channel is the great british bake off on
what is the smallest country in the world
who was the first woman to win a nobel prize
how long does it take light to reach earth from the sun
which planet is known as the red planet
who composed the four seasons
when was the last total solar eclipse in north america
who won the first season of american idol
what is the speed limit on the german autobahn
how many time zones does russia have
who painted the ceiling of the sistine chapel
what is the national animal of scotland
where does the saying break a leg come from
who was the president of the us during the great depression
what is the tallest mountain in africa
when did the simpsons first air
who owns the washington post
how many keys does a piano have
what year did the beatles break up
who sings the song you are my sunshine
who plays the mother in how i met your mother
name of the ship in moby dick
what kind of animal is a bongo
what is the hardest natural substance
who is the author of the very hungry caterpillar
where is the headquarters of the united nations
when was the eiffel tower built
what is the largest desert in the world
who invented the world wide web
when did netflix start streaming
what is the most spoken language in the world
who is the voice of siri
what is the main ingredient in guacamole
where did the game of chess originate
how many strings does a violin have
who is known as the father of medicine
what is the boiling point of water at sea level
what does a sommelier do
which ocean is the deepest
what is the plural of octopus
""",
    ("smalltalk", False): """
what's your name?
where do you live?
how old are you?
who made you?
what do you look like?
are we friends?
do you have a boyfriend?
what are you doing right now?
are you happy?
I love you
I'm going to bed
just got home from work
I'm at work and it's so slow
had a great day today!
tell me a joke
you're boring me
I'm back, did you miss me?
what's up
nothing much, you?
can I ask you something?
do you think I'm pretty?
I don't want to talk about it
let's be friends
you're my best friend
sorry I was rude earlier
I'm so happy right now
this is fun
goodnight!
see you later
I'm tired of being tired
do you ever sleep?
what makes you happy?
are you smarter than me?
you don't understand me
can you keep a secret?
I just need someone to talk to
I had the worst day
I'm proud of myself today
you're really good at this
do you get bored of talking to people?
say something funny
I'm kinda stressed about everything
what's your favourite food?
do you like your name?
you seem sad
are you mad at me?
I feel like nobody gets me
wanna hang out?
I think you're cool
hmm
okay then
that's so true
same
lol what
""",
    ("companion", True): """
What was the name of that book you recommended to me?
Which city did I say I wanted to visit next?
What recipe did I ask you about the other day?
What did I have for dinner on Saturday, did I mention it?
What was the song I told you I couldn't stop listening to?
Remind me what workout you suggested for my legs.
Which actors do I like?
Who is my favourite singer?
What was the gift idea you gave me for my mum?
What did I say my hobbies were?
What did you tell me to read before my exam?
What am I learning at the moment?
What places have I told you I visited?
Which restaurant did you point me to last time?
How did I say my weekend went?
What were the three things I wanted to work on?
What do you know about my taste in music?
What kind of food do I not like?
What pet do I have?
What's the name of the show I'm binge-watching?
What did we decide I should try for my insomnia?
Which team do I support?
What did I tell you about my childhood?
What's the thing I said I'd never do again?
What was the app you suggested for budgeting?
Which language did I say I'm learning?
What games do I play?
What was my new year's resolution?
Can you remind me of the films we discussed?
What painter did I say inspired me?
What kind of clothes do I like to wear?
What did you say about my writing?
Which of the recipes you gave me did I like?
What breakfast did you suggest for me?
What did I say about my new neighbours?
Which podcast episode did I tell you was great?
What was I excited about last week?
What's something I told you I'm scared of?
What hobby did you say might help me relax?
What do I do for a living?
Where do I work?
What time do I usually wake up?
What's my go-to coffee order?
What musical instrument did I say I play?
How many siblings do I have?
What was the trip I was planning?
Tell me what you remember about my family.
What did I tell you about my exams?
What did I want to cook for my friends?
What kind of vacation do I prefer?
""",
    ("known", True): """
What did Caro's brother study at college?
When did Femi and Lara go to the wine tasting?
Why did Ama stop running?
What kind of dog does Theo have?
Where did Yui go on her solo trip?
How long has Beto been teaching kindergarten?
What charity event did Hui organise?
What did Sunny paint after the trip?
Which concerts have Kiri and Dev been to together?
What did Nour bake for the school fair?
Who gave Oskar the guitar?
What did Ruth's kids name the hamster?
When did Laszlo start working at the hospital?
What is Ebony passionate about?
How did Tuan react to the news?
What did Mira do to relax after the move?
What does Sipho do on Sunday mornings?
What did Anneke write her poem about?
Is Kamal planning to go back to Cairo?
What did Gabi and Rui do for their anniversary?
What was the book Ilka lent to Bram?
What country is Ngaio's family from?
How does Jolene usually celebrate her birthday?
What are Pita's kids into these days?
What did the team give Hamid when he left?
Which park did Odile take the kids to?
What workshop did Zaynab attend?
When is Luka's next match?
What happened at Fenna's art show?
What advice did Priscila's mentor give her?
""",
    ("smalltalk_bot", False): """
what did you do today?
what are you doing this weekend?
where did you grow up?
do you have any pets?
what's your favourite movie?
have you ever been in love?
what did you have for breakfast?
do you have any hobbies?
where would you go on holiday if you could?
what music do you listen to?
do you have a best friend?
what's your dream job?
what are you afraid of?
do you like your job?
what did you do last weekend?
what's your favourite book?
do you have siblings?
where are you from?
do you like to travel?
what's the best thing that happened to you today?
are you busy right now?
what do you do when you're sad?
have you ever been to Paris?
do you play any sports?
what kind of food do you like?
what's your favourite season and why?
how do you spend your free time?
would you rather be a cat or a dog?
what's your favourite song right now?
do you go to school?
what are your plans for tonight?
how was your weekend?
do you ever get angry?
what's something you're good at?
do you like the rain?
if you could have a superpower what would it be?
what's your guilty pleasure?
I'm going to the gym now
just ate a whole pizza lol
my cat is sleeping on my keyboard haha
got a new haircut today!
I'm watching a movie right now
going for a walk, brb
I made pancakes this morning
finally friday!!
I'm so excited for the weekend
my coffee is cold now ugh
it's raining again here
I just woke up
""",
    ("companion_more", True): """
What did I ask you about on May 2nd?
What did we talk about on Monday evening?
What was the first thing I told you about myself?
What did you teach me about investing?
Can you recommend something similar to the book you recommended before?
How do I make that dish you taught me?
What were the places you suggested I visit in Japan?
Which tips did you share with me for my garden?
What did you tell me about meditation?
What did I say I was cooking for the party?
The movie you suggested, what was it called again?
How many of the books you recommended have I read?
What did I tell you my goal weight was?
Did I tell you which university I went to?
What questions did I ask you yesterday?
What did I say I wanted for my birthday?
What's the name of the gym I joined?
Which singer did I say I saw live?
What topics have we covered so far?
What was the plan we made for my study schedule?
How did I describe my perfect day?
What health issue did I mention?
What did you recommend for my dry skin?
Which hiking spot did you say I'd love?
What was my reaction to the film you suggested?
What are the dishes I said I can cook?
Do you remember the name of my first pet?
What was my favourite subject at school?
Which coffee place did I say had the best croissants?
What did I say I'd do after graduating?
""",
    ("task", False): """
Recommend five classic novels for a high school reading list.
Suggest some names for a golden retriever puppy.
List ten healthy snacks for kids.
Plan a three-day itinerary for a first trip to Rome.
What are some good icebreaker games for a team meeting?
Give me a weekly meal plan for a vegetarian family of four.
Suggest a workout routine for beginners.
What should a first-aid kit contain?
Write a thank-you note to a teacher.
Come up with a name for a podcast about gardening.
Describe a sunset to someone who has never seen one.
Make a list of questions to ask at a job interview.
What are the pros and cons of electric cars?
Give three tips for public speaking.
Create a grocery list for making lasagna.
Suggest a few board games for a party of eight adults.
Explain the rules of cricket in simple terms.
Write an out-of-office email reply.
What are good gifts for a ten year old who likes science?
Draft a polite complaint to a landlord about a broken heater.
""",
}


def list_rows() -> list[dict]:
    """The one-by-one messages, each on its own seeded split."""
    rows = []
    for (kind, label), block in LISTS.items():
        for line in block.strip().splitlines():
            text = line.strip()
            if text:
                rows.append(
                    {
                        "message": text,
                        "retrieve": label,
                        "kind": kind,
                        "split": split_of(text),
                        "origin": "template",
                    }
                )
    return rows


def reference_messages(eval_dir: Path) -> list[str]:
    """Every message of our fresh test sets and, when present, of the external gate sets."""
    paths = [*FRESH, *sorted(eval_dir.glob("gate_external*.jsonl"))]
    return [
        json.loads(line)["message"]
        for path in paths
        for line in path.read_text("utf-8").splitlines()
        if line.strip()
    ]


def decontaminate(
    groups: list[list[dict]], references: list[str], threshold: float = NEAR_DUPLICATE
) -> list[list[dict]]:
    """Each group of rows without its near-duplicates (MiniLM cosine) of any evaluation message.

    Evaluation sets are only ever used here to REMOVE training rows, so that they stay
    tests of messages unlike anything trained on. Hand-written rows are checked too: a
    common phrase ("who wrote hamlet") can be written independently by both sides. The
    references are embedded once; each group is embedded as its own batch, because the
    batch's padding moves cosines in the third decimal and the output must not depend on
    how groups are mixed.
    """
    sys.path.insert(0, str(ROOT))
    from memory.embeddings import shared_model

    model = shared_model()
    reference_vectors = model.encode(references).T
    cleaned = []
    for rows in groups:
        best = (model.encode([r["message"] for r in rows]) @ reference_vectors).max(axis=1)
        cleaned.append([r for r, s in zip(rows, best, strict=True) if s < threshold])
    return cleaned


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--eval-dir",
        type=Path,
        default=ROOT.parent / "shared" / "eval",
        help="where gate_external*.jsonl live, to decontaminate against (skipped if absent)",
    )
    args = parser.parse_args(argv)
    references = reference_messages(args.eval_dir)
    lines = DATA.read_text(encoding="utf-8").splitlines()
    hand = [json.loads(line) for line in lines if line.strip()]
    hand = [row for row in hand if row.get("origin") != "template"]
    made = generate({row["message"] for row in hand})
    known = {row["message"].lower() for row in hand + made}
    made += [row for row in list_rows() if row["message"].lower() not in known]
    kept, rows = decontaminate([hand, made], references)
    print(
        f"checked against {len(references)} evaluation messages: dropped "
        f"{len(hand) - len(kept)} hand-written and {len(made) - len(rows)} template rows"
    )
    with DATA.open("w", encoding="utf-8") as fh:
        for row in kept + rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    pos = sum(r["retrieve"] for r in rows)
    print(f"kept {len(kept)} hand-written rows; wrote {len(rows)} template rows ({pos} retrieve)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
