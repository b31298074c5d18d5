"""The words people are named by, and the words that never name anyone.

Word lists only, read by the follow-up rules (assistant/people.py and the modules that use
it): kin and roles ("my mum", "the vet"), the words a message speaks of its sender with,
titles, and capitalised words that are never who a message is about.
"""

from __future__ import annotations

# Words that never name what a conversation is about.
FUNCTION_WORDS = frozenset(
    """a an the and or but so of to in on at for with by from about as into over after before
    i me my mine we us our you your yours he him his she her hers they them their it its this
    that these those there here then what whats what's which who whom whose when where why how
    is are was were am be been being do does did done can could will would should shall may
    might must have has had having get got not no yes please thanks thank ok okay just also
    really very some any more most much many one ones again too well now tell say give know
    want need like let lets let's i'm i've i'd i'll it's that's there's don't can't won't
    remind remember recall since until till ago still ever yet""".split()
)


# The words a message speaks of its sender with: "now one about my dog" is about the user.
SELF = frozenset(
    "i me my mine myself we us our ours ourselves i'm i've i'd i'll im ive we're we've "
    "we'd we'll".split()
)


TITLES = frozenset("dr mr mrs ms miss mx prof sir".split())


# Plural roles that, said without "my" or "our", are people in general.
PEOPLE_IN_GENERAL = frozenset("kids children grandkids grandchildren".split())

# Capitalised but never who a message is about: "starts January 6" names no one,
# "Summer trip home to Montréal…" is no one "he" can be, and "the Polish guy I get my
# queens from" is not called Polish.
NO_ONE = frozenset(
    """january february march april may june july august september october november december
    monday tuesday wednesday thursday friday saturday sunday spring summer autumn winter
    feb mar apr jun jul aug sep sept oct nov dec mon tue tues wed thu thur thurs fri sat sun
    easter christmas xmas halloween thanksgiving today tomorrow tonight yesterday everyone
    everybody someone somebody anyone anybody nobody everything something anything nothing
    american british english irish scottish welsh french german italian spanish portuguese
    polish dutch belgian swiss austrian swedish norwegian danish finnish icelandic greek
    turkish russian ukrainian czech slovak hungarian romanian bulgarian serbian croatian
    chinese japanese korean indian pakistani thai vietnamese filipino indonesian malaysian
    australian canadian mexican brazilian argentinian chilean colombian peruvian cuban
    african nigerian kenyan ghanaian egyptian moroccan israeli iranian iraqi syrian lebanese
    arab arabic european asian latino hispanic""".split()
)


# Kin named more than one way: "Mom" and "my mum" are one person, and so are the words of
# other languages users write them in ("pai's place", "mi abuela", "Oma").
KIN = {
    word: group
    for group in (
        frozenset(
            "mom mum mother mam mama mamá mommy mummy mãe madre mutter mutti mami maman "
            "mamusia amma ammi".split()
        ),
        frozenset("dad father papa papá daddy pai padre vater vati papi appa".split()),
        frozenset(
            "grandma grandmother gran granny nan nana grandmama gramma grammy abuela avó oma "
            "nonna babcia yiayia".split()
        ),
        frozenset(
            "grandpa grandfather grandad granddad grandpapa gramps grampa abuelo avô opa nonno "
            "dziadek pappou".split()
        ),
        frozenset("wife wifey missus".split()),
        frozenset("husband hubby".split()),
        frozenset("girlfriend gf".split()),
        frozenset("boyfriend bf".split()),
        frozenset("fiance fiancé fiancee fiancée".split()),
        frozenset("grandkids grandchildren".split()),
    )
    for word in group
}


# Who "he" or "she" can be: "what year did he die?" is no one's mama, whatever a note
# sent before said ("maw-maw (my grandma, daddy's mama)"). Only words that say it for sure.
FEMALE = frozenset(
    (KIN["mom"] | KIN["grandma"] | KIN["wife"] | KIN["girlfriend"])
    | frozenset(
        """sister daughter aunt auntie aunty niece stepmom stepmum stepdaughter stepsister
        godmother goddaughter granddaughter landlady fiancee fiancée mrs ms miss""".split()
    )
)
MALE = frozenset(
    (KIN["dad"] | KIN["grandpa"] | KIN["husband"] | KIN["boyfriend"])
    | frozenset(
        """brother son uncle nephew stepdad stepson stepbrother godfather godson grandson
        mr sir""".split()
    )
)


# Kin and roles: how people in the user's life are named when not by name. "who's kunal's
# gf again?" asks for his girlfriend, and "she" is her, not Kunal; "Daddy's sitter" is one
# person, the sitter.
ROLES = KIN.keys() | frozenset(
    """sister brother partner boyfriend girlfriend son daughter kid kids child children
    aunt auntie aunty uncle cousin niece nephew sibling friend bestie bff roommate flatmate
    housemate teammate boss manager coworker colleague apprentice neighbor neighbour spouse
    stepmom stepmum stepdad stepson stepdaughter stepbrother stepsister godmother godfather
    godson goddaughter grandkid grandchild grandson granddaughter doctor gp dentist
    therapist psychologist psychiatrist landlord landlady teacher coach cofounder supervisor
    tutor mentor vet nurse lawyer solicitor accountant trainer instructor client advisor
    adviser pastor priest vicar rabbi imam headteacher professor surgeon physio
    physiotherapist osteopath chiropractor midwife pharmacist optician optometrist hygienist
    paediatrician pediatrician dermatologist cardiologist gynaecologist gynecologist
    counselor counsellor plumber builder electrician mechanic contractor handyman realtor
    hairdresser barber babysitter sitter petsitter dogsitter dogwalker nanny childminder
    housekeeper carer caregiver groomer dog cat puppy kitten pet horse rabbit bunny hamster
    tortoise turtle parrot pony cockatiel canary goldfish gecko ferret
    """.split()
)
