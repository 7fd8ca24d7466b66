"""Vocabulary of the ``crowd`` profile (:mod:`proxy.evaluation.crowd`): a bakery
co-operative run by several people through one app, a domain and word list of its
own (none of :mod:`.topics_en`'s deployments, ports and timeouts), so that nothing
tuned to the old profile's wording carries over.

Every pool of values that marks one end user's memory (supplier, nickname, colour,
bookkeeper, speakers, towns, tray codes) is drawn without replacement across the
users of a run: a value seen in another user's request is a cross-user leak.
"""

from __future__ import annotations

MILLS = ("Hollowbrook", "Stonegate", "Ferncliff", "Marlow", "Quarrytop", "Ashdown",
         "Birchmoor", "Kestrel", "Oakhurst", "Wyndham", "Thornbury", "Elmstead")
"""Flour mills (a supplier; updated once without "actually")."""

FLOUR_FIRST = "Our flour comes from the {v} mill."
FLOUR_UPDATES = ("We switched to the {v} mill for flour.",
                 "Flour comes from the {v} mill now.",
                 "We moved our flour order to the {v} mill.")
FLOUR_ASK = "Which mill supplies the flour we bake with?"

DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday")
DELIVERY_FIRST = "Ingredient deliveries reach the bakery on {v}."
DELIVERY_UPDATES = ("From this week ingredient deliveries reach the bakery on {v}.",
                    "Ingredient deliveries were moved to {v}.")
DELIVERY_ASK = "When do our ingredient deliveries turn up?"

NICKNAMES = ("Robin", "Sasha", "Juno", "Jules", "Remy", "Noor", "Tamsin", "Ari",
             "Marlo", "Pip", "Quinn", "Sorrel")
NICK_SAY = "I prefer to be addressed as {v} in your replies."
NICK_ASK = "How do I like to be addressed?"

COLOURS = ("teal", "amber", "violet", "crimson", "olive", "ivory", "cobalt", "saffron",
           "plum", "coral", "indigo", "mustard")
RULE_SAY = "From now on, always mark every proving tray with a {v} sticker."
RULE_AGAIN = "Reminder: proving trays always get a {v} sticker."
RULE_ASK = "What goes on the proving trays?"

LIMIT_SAY = "Set the daily bake limit to {v} loaves."
LIMIT_ASK = "What is the most bread we bake per day?"

BOOKKEEPERS = ("Ottilie", "Bram", "Wren", "Caspian", "Ines", "Lorcan", "Mireille",
               "Teodor", "Saskia", "Florian", "Hester", "Anselm")
BOOK_SAY = "My bookkeeper is {v}."
BOOK_AGAIN = ("{v} is the person who does my books.", "{v} handles the accounts for me.",
              "The one keeping my accounts in order is {v}.")
BOOK_ASK = "Who takes care of my bookkeeping?"

SPEAKERS = ("Halvard", "Ysolde", "Marek", "Annika", "Dov", "Giselle", "Osric", "Leontine",
            "Bertil", "Carys", "Emrys", "Fenna")
TOWNS = ("Tavira", "Kirkwall", "Ghent", "Bergen", "Trieste", "Galway", "Aarhus", "Zadar",
         "Olhao", "Kotor", "Lugano", "Visby", "Bruges", "Ronda", "Sintra", "Tartu")
HOME_SAY = "I live in {v}."
HOME_MOVED = ("I moved to {v} last month.", "Home is {v} these days.")
HOME_ASK = "Which town is {who} based in?"

TRAY_CODES = tuple(f"{a}{b}-{n}" for a, b, n in (
    ("R", "X", 417), ("K", "T", 238), ("L", "M", 905), ("P", "Z", 361), ("Q", "V", 742),
    ("H", "B", 150), ("W", "N", 683), ("J", "D", 529), ("F", "G", 874), ("S", "C", 296),
    ("Y", "U", 613), ("E", "A", 347)))
"""Codes that mark one conversation's local statements (batches, a checklist, a
one-off request, its goal): seen in another conversation, they are a cross-thread
leak."""

BATCH = "Batch {k}: the rye dough for tray {code} proved in {m} minutes."
"""Near-repetitive numbered steps (observations: they should not stand)."""
CHECKLIST = ("Stall checklist for tray {code}:\n1. put up the awning\n2. bring a cash float"
             " of {n} euros\n3. charge the card reader")
ONE_OFF = "For this reply only, lay the answer out as a table (tray {code})."
GOAL = "Goal: finish the tray {code} sourdough trial by Sunday."

FILLER = ("The rain finally stopped this afternoon.", "Sorry, the phone keeps ringing here.",
          "Give me a second, someone is at the counter.", "Thanks, that helps a lot.",
          "Okay, noted.", "Ha, that made me laugh.", "The street market was busy today.",
          "I burnt my thumb on the oven door again.", "Coffee first, then the rest.",
          "The new apprentice seems keen.", "Lovely weather for a bike ride.",
          "Let me check the back room.")
REPLIES = ("Understood.", "Got it.", "Noted, thanks.", "Sounds good.", "All right.",
           "Thanks for letting me know.")
QUESTION_REPLY = "Here is what I know about that."
SYSTEM = "You are the assistant of a small bakery co-operative. Be brief."
