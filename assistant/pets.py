"""Pets: an animal asked about by its kind ("my dog") and saved by its name or breed.

"now one about my dog, use his name" after a joke: the notes say "Biscuit (beagle) booster
vaccine at Riverview Vets", never "dog", so the search found nothing above its cut-off and
the model said it knew of no dog. Asked again in the words notes about a pet use (its
breeds, the vet, the jabs), the search finds Biscuit's note. A word list, no model call.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from memory.tokens import tokenize

# What a note about any pet may say instead of its kind. Not "food", "lead", "walk" or
# "lab": every store has them in other senses ("lead time", "lab results").
_CARE = "vet vets veterinary vaccine vaccination booster jab flea fleas worming wormer microchip"
_KINDS = {
    "dog": f"""dog puppy {_CARE} kennel groomer labrador retriever spaniel cockapoo cavapoo
        labradoodle beagle terrier staffie staffy collie poodle dachshund pug husky greyhound
        whippet lurcher schnauzer bulldog frenchie alsatian corgi chihuahua rottweiler
        doberman vizsla weimaraner westie yorkie basset bloodhound dalmatian samoyed shiba
        akita pomeranian bichon cavalier springer cocker sheltie kelpie mastiff ridgeback heeler""",
    "cat": f"""cat kitten {_CARE} cattery litter catflap tabby siamese persian ragdoll bengal
        sphynx moggy burmese""",
    # Not "hay" (hay fever), "cage", "tank" or "shell" (the petrol station): other senses.
    "rabbit": f"rabbit bunny {_CARE} lop lionhead hutch",
    "hamster": f"hamster gerbil {_CARE}",
    "tortoise": f"tortoise turtle terrapin {_CARE} vivarium",
    "bird": f"bird budgie {_CARE} parrot cockatiel parakeet canary",
    "horse": f"horse pony {_CARE} farrier saddle",
}
_ALSO = {"dogs": "dog", "puppy": "dog", "pup": "dog", "doggo": "dog", "cats": "cat",
         "kitten": "cat", "kitty": "cat", "rabbits": "rabbit", "bunny": "rabbit",
         "bunnies": "rabbit", "hamsters": "hamster", "tortoises": "tortoise",
         "turtle": "tortoise", "turtles": "tortoise", "birds": "bird", "budgie": "bird",
         "budgies": "bird", "parrot": "bird", "parrots": "bird", "pony": "horse",
         "ponies": "horse", "horses": "horse"}  # fmt: skip
_ANIMALS = sorted({*_KINDS, *_ALSO, "pet", "pets"}, key=len, reverse=True)  # longest first
_OWN_ANIMAL = re.compile(rf"\b(?:my|our)\s+({'|'.join(_ANIMALS)})\b", re.IGNORECASE)
# The kind said of one pet where the clause ends: "Praline (the cat, 14 now)", "Pickles
# (cat)". Not "dog walker Chloé", "Dogs v Hawks" or "nervous with fractious cats.": a word
# after it, or no "the" or bracket before it, and the kind is no pet of the user's.
_SINGULAR = sorted({*_KINDS, *(k for k in _ALSO if not k.endswith("s"))}, key=len, reverse=True)
_KIND_SAID = re.compile(
    rf"(?:\(\s*|\bthe\s+)({'|'.join(_SINGULAR)})\b(?=\s*(?:[,;:.)–—-]|$))",
    re.IGNORECASE,
)
# Words of any pet note that say nothing of which pet: the other cat goes to the vet too.
_ANY_PET = frozenset(tokenize("vet vets veterinary vaccine vaccination"))
_KIND_WORDS = frozenset(tokenize(" ".join(_ANIMALS)))


def _cues(kind: str) -> str:
    if kind.startswith("pet"):
        return " ".join(dict.fromkeys(" ".join(_KINDS.values()).split()))
    return " ".join(_KINDS[_ALSO.get(kind, kind)].split())


@lru_cache(maxsize=32)
def _signs(kind: str) -> frozenset[str]:
    """What says a note is about such a pet: its breeds and care, not the kind's own word."""
    return frozenset(tokenize(_cues(kind))) - _KIND_WORDS - _ANY_PET


def pet_note(text: str, kind: str) -> bool:
    """True for a note about a pet of that kind: "my dog", "(the cat)", a breed, a jab.

    Not a note that only says the word: "dog walker Chloé", "footy - Dogs v Hawks".
    """
    if _signs(kind) & set(tokenize(text)) or _OWN_ANIMAL.search(text):
        return True
    own = _ALSO.get(kind, kind)
    said = (_ALSO.get(k, k) for k in (m.casefold() for m in _KIND_SAID.findall(text)))
    return any(own.startswith("pet") or k == own for k in said)


def by_its_kind(query: str, memories: Sequence[str]) -> str:
    """The query asked again in the words of notes about the user's pet of that kind, or "".

    Only when none of the memories found already speaks of such a pet.
    """
    asked = _OWN_ANIMAL.search(query)
    if not asked:
        return ""
    kind = asked.group(1).casefold()
    # "Gumbo the basset — … rabies booster due" was found for "my cat": a jab is any pet's,
    # and the basset's note, taken for the cat's, kept the cat's own notes from being asked.
    if any(pet_note(text, kind) and not other_kind(text, kind) for text in memories):
        return ""
    return _cues(kind)


def says_kind(text: str, kind: str) -> bool:
    """True when a text says the kind by its word or a breed ("(blue heeler", "the cat")."""
    own = _ALSO.get(kind, kind)
    said = [w.casefold() for w in re.findall(r"[^\W\d_]+", text)]
    return any(_ALSO.get(w, w) == own for w in said) or kind_named(text) == own


# The name opens the note, typed in lower case as often as not, with its kind or its vet
# next: "sudu the cat only eats…", "chango (my dog, el perro)", "Pamuk = our cat",
# "biscuit's vet = dr lambert", "Tofu vet - C5 booster".
_OPENING = re.compile(r"^\W*([^\W\d_][\w'’-]*?)(?:['’]s)?(?=[\s(=:–—-])\s*(.*)$", re.DOTALL)
_BESIDE = re.compile(r"\(([^)]{0,40})|the\s+(\w+)|[=:–—-]\s*((?:my|our)\s+(?:\w+\s+){0,2}\w+)")
_CARED = re.compile(r"(?:vet|vets|booster|vaccine|jab|microchip)\b", re.IGNORECASE)


def opening_name(note: str, kind: str) -> str:
    """The word a note about the user's pet of this kind opens on, when it is the pet's name.

    "" unless the kind (or a breed of it) or a vet word comes right after it. The caller
    says which words are never names.
    """
    opens = _OPENING.match(note)
    if not opens:
        return ""
    name, rest = opens[1], opens[2]
    beside = _BESIDE.match(rest)
    if beside and says_kind(next(g for g in beside.groups() if g is not None), kind):
        return name
    if _CARED.match(rest) and not other_kind(note, kind):
        return name
    return ""


def own_pet(message: str) -> re.Match[str] | None:
    """Where a message says the user's pet by its kind ("my dog"); group 1 is the kind."""
    return _OWN_ANIMAL.search(message)


@lru_cache(maxsize=32)
def pet_words(kind: str) -> frozenset[str]:
    """The tokens a note about such a pet says of it, none of them its name."""
    return _signs(kind) | _ANY_PET | _KIND_WORDS


@lru_cache(maxsize=32)
def _only_of(kind: str) -> frozenset[str]:
    """What a note says of this kind of pet alone: its word and breeds, not the vet's care."""
    return frozenset(tokenize(_cues(kind))) - frozenset(tokenize(_CARE))


def other_kind(text: str, kind: str) -> bool:
    """True for a note that says it is about a pet of another kind ("Kluska's dog trainer")."""
    own = _ALSO.get(kind, kind)
    if own not in _KINDS:
        return False  # "my pet": any kind is its own
    return any(_only_of(other) & set(tokenize(text)) for other in _KINDS if other != own)


def kind_asked(person: str) -> str:
    """The kind of pet the user's own a person is ("my dog": "dog"; "cat" alone: "")."""
    asked = _OWN_ANIMAL.fullmatch(person.strip())
    return asked.group(1).casefold() if asked else ""


def kind_named(text: str) -> str:
    """The kind of pet a text speaks of by its kind or breed ("a beagle": "dog"), or ""."""
    said = set(tokenize(text))
    return next((kind for kind in _KINDS if _only_of(kind) & said), "")
