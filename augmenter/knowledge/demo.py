"""A small demo knowledge base in DSTC11's `knowledge.json` format, written by the project itself.

It lets the default `augmenter chat` run with no data download. Hotels and restaurants are invented.
"""

from __future__ import annotations

import json
from pathlib import Path

from augmenter.paths import cache_dir


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
                ("Couples", ["The room overlooked the river and was very quiet at night.",
                             "Breakfast was simple but the coffee was excellent."]),
                ("Business travelers", ["The wifi was slow in the evenings.",
                                        "Staff printed my documents at the front desk without charge."]),
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
                ("Families", ["The dumplings were fresh and the portions were generous.",
                              "It got very loud on Friday night."]),
                ("Couples", ["The crispy duck was the best I have had.", "Service was slow when it was busy."]),
            ),
        },
        "1": {
            "name": "The Olive Branch",
            "faqs": _faqs(
                ("Is the restaurant wheelchair accessible?", "Yes, there is step-free access and an accessible toilet."),
                ("Do you serve alcohol?", "Yes, we serve Italian wines and local beers."),
                ("Are dogs allowed?", "Dogs are welcome on the outdoor terrace only."),
            ),
            "reviews": _reviews(
                ("Couples", ["The pasta was homemade and delicious.", "The wine list was short but well chosen."]),
                ("Business travelers", ["Prices were a little high for the portion size.",
                                        "The terrace is perfect on a sunny day."]),
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
            tmp = target.with_suffix(".tmp")
            tmp.write_text(text, encoding="utf-8")
            tmp.replace(target)
    return directory / "knowledge.json"


def load_demo_knowledge(directory: str | Path | None = None):
    """The demo knowledge base, loaded through the DSTC11 loader like any published knowledge.json."""
    from augmenter.knowledge.base import load_dstc11

    path = write_demo_knowledge(directory)
    return load_dstc11(path, path.parent / "entity_mapping.json")
