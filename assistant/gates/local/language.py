"""A message the local gate cannot read: written in another language, so it fails open.

The classifier was trained on English. "sale a qué hora?" after "ya saqué el buquebus
para montevideo", or "vence cuándo?", read p=0.00 and were skipped, though the user's own
notes held the answers. A gate that cannot read a message searches it, as it does when it
fails. Only the common words of a few languages are counted, never a name: "Rua dos
Lagares" or "Dr Ferraro" in an English message leave it English.
"""

from __future__ import annotations

import re

from memory.tokens import STOPWORDS

# Grammar words, question words and a few time words of Spanish, Portuguese, Italian,
# French and German. None is an English word or an English texter's: "die", "also", "was",
# "son", "me", "no", "sale", "per", "ya", "y" ("y is it late"), "na" ("coming up soon na"),
# "ta", "ma", "mon" (Monday), "hay" or "era" say nothing of a language, and are left out.
_OTHER = frozenset(
    """
    que qué el los las del una unos unas por para cómo cuándo cuando dónde donde cuánto
    cuanto cuánta cuál cual cuáles quién quien está estás esta este eso esa ese es fue
    tengo tiene tienes tenemos mañana hoy ayer hora horas día días fecha semana año
    pero muy más también su sus nuestro nuestra le les vez
    não nao uma uns umas ao aos à às dos das nas nos meu minha meus minhas seu
    sua é estou tem temos quanto quanta qual quem dia amanhã hoje ontem mês ano mas muito
    você voce obrigado obrigada
    il della dello degli delle di che è sono mio mia miei tuo tua quale cosa
    hai abbiamo domani oggi ieri ora giorno settimana mese anno molto più anche grazie
    le les du je tu il elle nous vous mes quand où combien quel quelle
    quels qui quoi avec dans sur c'est j'ai demain aujourd'hui hier heure jour mois
    année mais très aussi merci
    der das und ist ich du sie wir ihr mein meine dein wann wo wie viel welche welcher
    wer nicht mit für auf ein eine einen heute gestern uhr woche monat jahr aber sehr
    auch danke
    """.split()
)
_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)?")


def not_english(text: str) -> bool:
    """True when a message is mostly another language's words: two or more, outnumbering
    English grammar words, or one in a short question with none ("vence cuándo?")."""
    said = [w.casefold().replace("’", "'") for w in _WORD.findall(text)]
    other = sum(w in _OTHER for w in said)
    english = sum(w in STOPWORDS for w in said)
    if other >= 2:
        return other > english
    return other == 1 and english == 0 and len(said) <= 4 and text.rstrip().endswith("?")
