"""A small demo knowledge base in DSTC11's `knowledge.json` format, written by the project itself.

It lets the default `augmenter chat` run with no data download. Hotels and restaurants are invented.
A second demo knowledge base, `DEMO2_KNOWLEDGE` (`task=demo2`), covers other domains (a bakery, a bike repair
shop, a dental clinic, a public library, a museum) in the JSONL format of `load_jsonl`: it shows the assistant
outside travel and lets `bench/fewshot_leakage.py` ask questions that the knowledge cannot answer.
"""

from __future__ import annotations

import json
from pathlib import Path

from augmenter.knowledge.base import KnowledgeBase, load_dstc11, load_jsonl
from augmenter.paths import cache_dir
from augmenter.storage import write_atomic


def _faqs(*pairs: tuple[str, str]) -> dict:
    return {str(i): {"question": q, "answer": a} for i, (q, a) in enumerate(pairs)}


def _reviews(*reviews: tuple[str, list[str]]) -> dict:
    return {
        str(i): {"traveler_type": kind, "sentences": {str(j): s for j, s in enumerate(sents)}}
        for i, (kind, sents) in enumerate(reviews)
    }


DEMO_KNOWLEDGE = {
    "hotel": {
        "0": {
            "name": "Riverside Lodge",
            "faqs": _faqs(
                ("Is there free parking?", "Yes, guests can park for free in the lot behind the lodge."),
                ("Do you allow pets?", "Small dogs are welcome for a fee of 10 pounds per night."),
                ("What time is check-in?", "Check-in starts at 2 pm and check-out is at 11 am."),
                ("Is breakfast included?", "A continental breakfast is included in every room rate."),
            ),
            "reviews": _reviews(
                (
                    "Couples",
                    [
                        "The room overlooked the river and was very quiet at night.",
                        "Breakfast was simple but the coffee was excellent.",
                    ],
                ),
                (
                    "Business travelers",
                    [
                        "The wifi was slow in the evenings.",
                        "Staff printed my documents at the front desk without charge.",
                    ],
                ),
            ),
        },
        "1": {
            "name": "Grand Meridian Hotel",
            "faqs": _faqs(
                ("Is there a swimming pool?", "Yes, there is an indoor heated pool open from 7 am to 10 pm."),
                ("Do you have a gym?", "The fitness centre is open 24 hours for all guests."),
                ("Is there free parking?", "No, parking costs 15 pounds per day in the underground garage."),
                ("Do you offer airport shuttles?", "A shuttle to the airport leaves every hour for 12 pounds."),
            ),
            "reviews": _reviews(
                ("Families", ["The kids loved the pool.", "Our room was spacious but the bathroom was dated."]),
                ("Solo travelers", ["The gym had new equipment.", "Room service was expensive and slow."]),
            ),
        },
        "2": {
            "name": "Apple Tree Guest House",
            "faqs": _faqs(
                ("Is smoking allowed?", "No, all rooms and the garden are non-smoking."),
                ("Do you have wifi?", "Free wifi is available in every room."),
                ("Is there luggage storage?", "Yes, you can leave bags at reception before check-in."),
            ),
            "reviews": _reviews(
                ("Couples", ["The owners were warm and welcoming.", "The beds were a bit too soft for us."]),
                ("Friends", ["Great value for the price.", "The garden was lovely in the morning."]),
            ),
        },
    },
    "restaurant": {
        "0": {
            "name": "Golden Dragon",
            "faqs": _faqs(
                ("Do you have vegetarian options?", "Yes, the menu has a full vegetarian section with tofu dishes."),
                ("Do you take reservations?", "Reservations are taken by phone for groups of up to 12."),
                ("Is there a delivery service?", "Delivery is available within 3 miles for orders over 20 pounds."),
            ),
            "reviews": _reviews(
                (
                    "Families",
                    ["The dumplings were fresh and the portions were generous.", "It got very loud on Friday night."],
                ),
                ("Couples", ["The crispy duck was the best I have had.", "Service was slow when it was busy."]),
            ),
        },
        "1": {
            "name": "The Olive Branch",
            "faqs": _faqs(
                (
                    "Is the restaurant wheelchair accessible?",
                    "Yes, there is step-free access and an accessible toilet.",
                ),
                ("Do you serve alcohol?", "Yes, we serve Italian wines and local beers."),
                ("Are dogs allowed?", "Dogs are welcome on the outdoor terrace only."),
            ),
            "reviews": _reviews(
                ("Couples", ["The pasta was homemade and delicious.", "The wine list was short but well chosen."]),
                (
                    "Business travelers",
                    ["Prices were a little high for the portion size.", "The terrace is perfect on a sunny day."],
                ),
            ),
        },
        "2": {
            "name": "Spice Garden",
            "faqs": _faqs(
                ("Do you have gluten-free dishes?", "Most curries are gluten-free; ask staff for the allergen list."),
                ("Do you offer takeaway?", "Yes, takeaway orders can be placed by phone or at the counter."),
                ("Is there parking?", "There is no private parking, but a public car park is 100 metres away."),
            ),
            "reviews": _reviews(
                ("Friends", ["The lamb curry was rich and spicy.", "The beer was a good value for the money."]),
                ("Solo travelers", ["Staff recommended a mild dish for me.", "The naan bread was a bit dry."]),
            ),
        },
    },
}

DEMO_ENTITY_MAPPING = {
    "riverside lodge": ["the riverside", "riverside"],
    "grand meridian hotel": ["grand meridian", "the meridian"],
    "apple tree guest house": ["apple tree", "apple tree guesthouse"],
    "golden dragon": ["the golden dragon"],
    "the olive branch": ["olive branch"],
    "spice garden": ["the spice garden"],
}

DEMO_SCRIPT = [
    "Hi, I'm looking for a hotel with a pool.",
    "Does the Grand Meridian Hotel have free parking?",
    "And is there an airport shuttle there?",
    "I also want dinner at Spice Garden. Is their beer a good value?",
]


def write_demo_knowledge(directory: str | Path | None = None) -> Path:
    """Write the demo `knowledge.json` and `entity_mapping.json` (once) and return the knowledge file's path."""
    directory = Path(directory) if directory else cache_dir() / "demo"
    directory.mkdir(parents=True, exist_ok=True)
    for name, payload in (("knowledge.json", DEMO_KNOWLEDGE), ("entity_mapping.json", DEMO_ENTITY_MAPPING)):
        target = directory / name
        text = json.dumps(payload, indent=1)
        if not target.exists() or target.read_text(encoding="utf-8") != text:
            write_atomic(target, text)
    return directory / "knowledge.json"


def load_demo_knowledge(directory: str | Path | None = None) -> KnowledgeBase:
    """The demo knowledge base, loaded through the DSTC11 loader like any published knowledge.json."""
    path = write_demo_knowledge(directory)
    return load_dstc11(path, path.parent / "entity_mapping.json")


# ---- the second demo: other domains, JSONL format ----------------------------------------------------------------
def _entity(name: str, domain: str, aliases: list[str], faqs: list[tuple[str, str]], reviews: list[str]) -> list[dict]:
    head = {"entity": name, "aliases": aliases, "domain": domain}
    rows = [{**head, "question": q, "answer": a, "doc_type": "faq"} for q, a in faqs]
    return rows + [{**head, "text": text, "doc_type": "review"} for text in reviews]


DEMO2_KNOWLEDGE: list[dict] = [
    *_entity(
        "Crumb and Crust Bakery",
        "bakery",
        ["crumb and crust", "crumb & crust"],
        [
            (
                "Are you open on Sundays?",
                "No, the bakery is closed on Sundays. It opens Monday to Saturday from 7 am to 3 pm.",
            ),
            ("How much is a sourdough loaf?", "A large sourdough loaf costs 4.50 pounds and a small one 2.80 pounds."),
            ("Do you sell gluten-free bread?", "Yes, a gluten-free seeded loaf is baked every Friday."),
            ("Can I order a birthday cake?", "Yes, birthday cakes must be ordered at least three days ahead."),
        ],
        ["The cinnamon buns sell out before ten, so come early.", "The coffee is only average."],
    ),
    *_entity(
        "Spoke Doctor",
        "bike_repair",
        ["spoke doctor bikes", "the spoke doctor"],
        [
            ("How much does a puncture repair cost?", "A puncture repair costs 8 pounds and is done while you wait."),
            ("How long does a full service take?", "A full service takes two working days and costs 60 pounds."),
            ("Do you repair electric bikes?", "No, we do not repair electric bikes or their batteries."),
            ("Can I rent a bike?", "Yes, city bikes can be rented for 15 pounds a day, helmet included."),
        ],
        ["They fixed my gears in twenty minutes.", "A bit pricey, but the mechanic explained everything."],
    ),
    *_entity(
        "Maple Street Dental Clinic",
        "dental",
        ["maple street dental", "the dental clinic"],
        [
            ("What are your opening hours?", "Monday to Friday from 8 am to 6 pm, and Saturday from 9 am to noon."),
            ("How much is a check-up?", "A check-up costs 35 pounds for adults and is free for children under 18."),
            ("Do you take new patients?", "Yes, new patients can register online or at reception."),
            (
                "Can I get an emergency appointment?",
                "Two emergency slots are kept free every weekday morning; call at 8 am.",
            ),
        ],
        ["The hygienist was gentle and explained every step.", "I waited forty minutes past my appointment time."],
    ),
    *_entity(
        "Eastbrook Public Library",
        "library",
        ["eastbrook library", "the eastbrook"],
        [
            ("Is a library card free?", "Yes, a library card is free for anyone who lives or works in the borough."),
            ("How many books can I borrow?", "You can borrow up to 12 books at a time, for three weeks."),
            ("Are you open on Sundays?", "Yes, the library is open on Sundays from 11 am to 4 pm."),
            ("Is there wifi?", "Yes, free wifi is available; ask at the front desk for the password."),
        ],
        ["The children's corner is bright and quiet enough for reading."],
    ),
    *_entity(
        "Harbour Museum",
        "museum",
        ["the harbour museum", "harbour maritime museum"],
        [
            ("How much is admission?", "Admission is free; special exhibitions cost 6 pounds."),
            ("When is the museum open?", "Tuesday to Sunday from 10 am to 5 pm. The museum is closed on Mondays."),
            ("Can I take photos?", "Photos without flash are allowed everywhere except the map room."),
            ("Is there a cafe?", "Yes, the cafe on the top floor serves lunch until 2.30 pm."),
        ],
        ["The ship models were the highlight for our kids.", "The cafe was crowded at lunchtime."],
    ),
]

# One conversation (the second question leans on the first for its entity). What each turn's true answer is:
# "no" (the knowledge says no / closed), "price" or "time" (a figure in the knowledge), "yes", or
# "unanswerable" (the knowledge does not say: the assistant should say so rather than guess).
DEMO2_TURNS: list[tuple[str, str]] = [
    ("Is Crumb and Crust Bakery open on Sundays?", "no"),
    ("How much is a sourdough loaf there?", "price"),
    ("Does Spoke Doctor repair electric bikes?", "no"),
    ("How much does a puncture repair cost at Spoke Doctor?", "price"),
    ("Does Spoke Doctor sell second-hand bikes?", "unanswerable"),
    ("What are the opening hours of Maple Street Dental Clinic?", "time"),
    ("Does the dental clinic accept my insurance?", "unanswerable"),
    ("Is Eastbrook Public Library open on Sundays?", "yes"),
    ("Where is Eastbrook Public Library located?", "unanswerable"),
    ("How much is admission at the Harbour Museum?", "price"),
    ("Does the Harbour Museum have a gift shop?", "unanswerable"),
    ("Is the Harbour Museum open on Mondays?", "no"),
]
DEMO2_SCRIPT: list[str] = [q for q, _ in DEMO2_TURNS]


def write_demo2_knowledge(directory: str | Path | None = None) -> Path:
    """Write the second demo's `knowledge.jsonl` (atomically, only when it changed) and return its path."""
    directory = Path(directory) if directory else cache_dir() / "demo2"
    directory.mkdir(parents=True, exist_ok=True)
    target = directory / "knowledge.jsonl"
    text = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in DEMO2_KNOWLEDGE)
    if not target.exists() or target.read_text(encoding="utf-8") != text:
        write_atomic(target, text)
    return target


def load_demo2_knowledge(directory: str | Path | None = None) -> KnowledgeBase:
    """The second demo knowledge base, loaded through the JSONL loader like the user's own knowledge."""
    return load_jsonl(write_demo2_knowledge(directory))
