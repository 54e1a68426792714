"""Contacts named in a sentence (by tax ID, name, alias or one distinctive word) and capitalised names."""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property

from memory_core.backends.local_extractor.places import PLACES
from memory_core.backends.local_extractor.text import LEGAL_SUFFIXES, Sentence, fold, name_tokens, normalise_tax_id
from memory_core.backends.local_extractor.units import FUNCTION_WORDS
from memory_core.domain.dates import COUNTS
from memory_core.domain.model_port import KnownContact

GENERIC_NAME_WORDS = {"talleres", "taller", "construcciones", "transportes", "servicios", "hermanos", "grupo",
                       "industrias", "comercial", "distribuciones", "hierros", "asesoria", "consultores",
                       "consulting", "the", "de", "del", "la", "el", "los", "las", "y", "and", "company",
                       "instalaciones", "reformas", "electricidad", "fontaneria", "academia", "clinica",
                       "restaurante", "bar", "cafeteria", "ferreteria", "supermercado", "global", "iberica",
                       "espana", "madrid", "barcelona", "sur", "norte", "centro", "tecnologia", "soluciones"}


@dataclass(frozen=True)
class Mention:
    contact: KnownContact
    start: int
    end: int
    confidence: float


def token_spans(low: str) -> list[tuple[str, int, int]]:
    return [(m.group(), m.start(), m.end()) for m in re.finditer(r"[a-z0-9]+", low)]


class Pool(tuple):
    """Known subjects (contacts, then named subjects) with the index that finds them in a sentence, built once
    for the pool: a writer may know hundreds of names, and every sentence of every message is looked up in them."""

    @cached_property
    def index(self) -> _MentionIndex:
        return _MentionIndex(self)

    def __add__(self, more) -> Pool:
        """The pool with `more` after it; its index, if built, extended rather than built again."""
        pool = Pool(tuple(self) + tuple(more))
        if "index" in self.__dict__:
            pool.__dict__["index"] = self.index.extended(tuple(more), len(self))
        return pool


class _MentionIndex:
    """Where each known subject's tax ID, name and alias words are, so a sentence is looked up word by word."""

    def __init__(self, contacts: tuple[KnownContact, ...] = ()):
        self.by_tax: dict[str, list[KnownContact]] = {}
        # A name's first word -> (contact's place, name's place, the contact, the name's words), in pool order.
        self.by_first: dict[str, list[tuple[int, int, KnownContact, tuple[str, ...]]]] = {}
        self.owners: dict[str, set[str]] = {}  # a distinctive word -> the ids of the subjects whose names have it
        self.by_id: dict[str, KnownContact] = {}
        self.named_ids: frozenset[str] = frozenset()
        self.keep: frozenset[str] = frozenset()  # every word of every name
        self._add(contacts, 0)

    def extended(self, more: tuple[KnownContact, ...], start: int) -> _MentionIndex:
        """A copy with `more` added at places start...; this index is left as it is (its lists are not shared)."""
        out = _MentionIndex()
        out.by_tax = {k: list(v) for k, v in self.by_tax.items()} if any(c.tax_id for c in more) else dict(self.by_tax)
        out.by_first, out.owners, out.by_id = dict(self.by_first), dict(self.owners), dict(self.by_id)
        out.named_ids, out.keep = self.named_ids, self.keep
        for c in more:
            for name in (c.name, *c.aliases):
                wanted = name_tokens(name)
                if wanted:
                    out.by_first[wanted[0]] = list(out.by_first.get(wanted[0], ()))
                for w in wanted:
                    if w in out.owners:
                        out.owners[w] = set(out.owners[w])
        out._add(more, start)
        return out

    def _add(self, contacts: tuple[KnownContact, ...], start: int) -> None:
        for ci, c in enumerate(contacts, start):
            if c.tax_id:
                self.by_tax.setdefault(normalise_tax_id(c.tax_id), []).append(c)
            for ni, name in enumerate((c.name, *c.aliases)):
                wanted = name_tokens(name)
                if wanted:
                    self.by_first.setdefault(wanted[0], []).append((ci, ni, c, wanted))
                for w in wanted:
                    if len(w) >= 4 and w not in GENERIC_NAME_WORDS and not w.isdigit():
                        self.owners.setdefault(w, set()).add(c.id)
            self.by_id[c.id] = c
        self.named_ids |= {c.id for c in contacts if c.kind == "named"}
        self.keep |= {w for c in contacts for n in (c.name, *c.aliases) for w in name_tokens(n)}


def _index(contacts: tuple[KnownContact, ...]) -> _MentionIndex:
    return contacts.index if isinstance(contacts, Pool) else _MentionIndex(contacts)


def find_mentions(s: Sentence, contacts: tuple[KnownContact, ...]) -> list[Mention]:
    """Every contact named in the sentence: by tax ID, full name or alias, or one distinctive word."""
    index = _index(contacts)
    found: list[Mention] = []
    for m in re.finditer(r"\b[A-Z0-9][A-Z0-9.\-]{6,14}[A-Z0-9]\b", s.text.upper()):
        tax = normalise_tax_id(m.group())
        if len(tax) >= 8:
            found.extend(Mention(c, m.start(), m.end(), 0.95) for c in index.by_tax.get(tax, ()))
    tokens = token_spans(s.low)
    words = [t for t, _, _ in tokens]
    named = []
    for i, word in enumerate(words):
        for ci, ni, c, wanted in index.by_first.get(word, ()):
            n = len(wanted)
            if tuple(words[i: i + n]) == wanted:
                named.append((ci, ni, i, Mention(c, tokens[i][1], tokens[i + n - 1][2], 0.9)))
    found.extend(m for *_, m in sorted(named, key=lambda t: t[:3]))  # by subject, its name, then place
    if found:
        return found
    # "García" for "Talleres García": a capitalised, distinctive word that only one contact has; typed in lower case
    # where the words around it make it a name ("los de nebula", "kestrel have upped", "facturas de egaña").
    for word, start, end in tokens:
        ids = index.owners.get(word, ())
        if len(ids) == 1 and (s.text[start].isupper() or _named_in_lower_case(s.low, start, end)) and \
                not in_place(s, start, end):
            contact = index.by_id[next(iter(ids))]
            if not _other_name_around(s, start, end, contact):
                found.append(Mention(contact, start, end, 0.75))
    return found


# Before a known subject's word typed in lower case: who or what of it ("los de nebula", "la factura de egaña", "at
# brindley"); after it, when it opens the sentence, what they do ("kestrel have upped...", "penrose are shut...").
_LOWER_BEFORE = re.compile(r"(?:\b(?:los|las|el|la|lo)\s+de|\b(?:de|del|a|al|con|para|en|at|from|with|to|for|of|"
                           r"by|re|about|sobre|chez|left|quit|dejado)|^(?:y|and|que|q|ojo q|ojo que|fyi|btw))\s+$")
_LOWER_AFTER = re.compile(r"^(?:'s\b|s\b|\s+(?:have|has|had|are|is|were|was|pay|pays|paid|now|want|wants|say|says|"
                          r"said|ya|ahora|nos|les|paga|pagan|pago|quiere|quieren|dice|dicen|ha|han|se|no|don't|dont|"
                          r"doesn't|never|always|siempre|nunca|only|solo|tambien|also)\b)")


def _named_in_lower_case(low: str, start: int, end: int) -> bool:
    """A word typed in lower case reads as a name by what stands around it (`_LOWER_BEFORE`, `_LOWER_AFTER`)."""
    return bool(_LOWER_BEFORE.search(low[:start])) or (not low[:start].strip() and bool(_LOWER_AFTER.match(low[end:])))


def _other_name_around(s: Sentence, start: int, end: int, contact: KnownContact) -> bool:
    """The word is part of another name: "Farmacia Levante" is not "Construcciones Levante"."""
    own = {w for name in (contact.name, *contact.aliases) for w in name_tokens(name)}
    for run, run_start, run_end in name_runs(s, 0, len(s.text)):
        if run_start <= start and end <= run_end:
            others = [w for w in re.findall(r"[a-z0-9]+", fold(run)) if w not in own and w not in _CONNECTORS]
            # A sentence's capitalised first word ("Ayer Levante...") is no part of a name.
            if run_start == 0 and others and fold(run.split()[0]) == others[0] and len(others) == 1 \
                    and run.split()[0].lower() in _SENTENCE_OPENERS:
                return False
            return bool(others)
    return False


_CONNECTORS = {"de", "del", "la", "y", "e"}
# A subject's name never starts with these; a capitalised one opens a sentence or says something else.
_SENTENCE_OPENERS = {"ayer", "hoy", "manana", "ahora", "luego", "today", "yesterday", "tomorrow", "now", "then"}


_CAP_RUN = re.compile(r"[A-ZÁÉÍÓÚÑÜ][\w&'.\-]*(?:\s+(?:(?:de|del|de la|y|e|&)\s+)?[A-ZÁÉÍÓÚÑÜ][\w&'.\-]*)*")
_RUN_STOP = {"ahora", "el", "la", "lo", "los", "las", "nuestro", "nuestra", "mi", "our", "the", "no", "si", "y", "pero",
             "oye", "vale", "por", "desde", "con", "a", "en", "hoy", "ya", "bueno", "pues", "tambien", "ademas",
             "cliente", "proveedor", "i", "we", "my", "now", "also", "and", "but", "recuerda", "remember", "que",
             "para", "de", "del", "un", "una", "al", "ok", "hola", "ojo", "nota", "iban", "nif", "cif",
             "note", "fyi", "since", "from", "today", "at", "in", "on", "for",
             # A group spoken of as a whole: "Customers from abroad pay upfront", "Orders for Ibiza ship on Thursdays".
             "customers", "clients", "clientes", "orders", "pedidos", "shipments", "envios", "deliveries", "entregas",
             # Taxes and documents written in capitals: "el IVA de Hierros Olano" names Hierros Olano.
             "iva", "irpf", "dni", "nie", "pdf", "vat", "swift", "bic", "sepa",
             # A question's opening word: "Has Harbor Foods paid?", "Did Printwise call?".
             "has", "have", "had", "did", "does", "do", "is", "are", "was", "were", "can", "could", "will", "would",
             "should", "how", "what", "when", "where", "why", "who", "cuando", "como", "donde", "cuanto"}
# Capitalised words that are never a subject's name: greetings, thanks, reactions, discourse markers.
NOT_NAMES = frozenset("""
thanks thank gracias wow woah hey hi hello hola yep yes yeah yup nope lol lmao omg ok okay vale bueno buena
anyway anyways pues mira oye total claro sure haha jaja genial great cool nice awesome amazing congrats
congratulations enhorabuena felicidades oh ah aw aww so well btw also and but or the this that these those it
its i i'm im we we're you your he she they my our his her their me us su sus sorry perdona perdon good morning
night buenos buenas dear querido querida sounds looks that's thats it's what how why when where who which
perfecto perfect exacto exactly totally definitely absolutely honestly actually basically anyway
por cierto ademas igualmente bien vaya venga guay uff ay uy eh hmm um every each cada such
they're theyre they'll they've we'll we've you're youre he's she's there's theres here's heres
lunes martes miercoles jueves viernes sabado domingo monday tuesday wednesday thursday friday saturday sunday
sabados domingos mondays tuesdays wednesdays thursdays fridays saturdays sundays weekends
enero febrero marzo abril mayo junio julio agosto septiembre octubre noviembre diciembre january february
march april may june july august september october november december christmas navidad easter
nochebuena nochevieja
nos os te se les
""".split())
_RUN_STOP |= NOT_NAMES
# Words that make a capitalised run a business's name ("Hierros Olano", "Farmacia Levante").
COMPANY_WORDS = frozenset("""
talleres taller hierros construcciones transportes farmacia restaurante bar cafeteria clinica academia
ferreteria distribuciones servicios grupo industrias comercial asesoria gestoria consultores consulting
reformas instalaciones panaderia pasteleria carpinteria ceramicas viveros frutas muebles electricidad
fontaneria hermanos supermercado almacenes bodegas hotel inmobiliaria logistica tecnologia soluciones
studio estudio agencia seguros autos motor motors garage garaje imprenta papeleria libreria peluqueria
floristeria distribuidora carniceria fruteria pescaderia optica autoescuela veterinaria lavanderia tintoreria
cerrajeria pinturas maderas aluminios cristaleria cerveceria asador meson hostal gimnasio dental abogados arquitectos
ingenieria envases embalajes recambios neumaticos electrodomesticos joyeria zapateria textil textiles carnicas lacteos
conservas graficas suministros
foods wholesale wholesalers packaging plumbing plumbers supplies deli bakery logistics trading builders electrical
engineering printing printers catering cleaning cleaners hardware timber joinery kitchens florist florists
restaurant cafe pharmacy clinic print paper seafood seafoods dairy brewery farm farms design media studios fitness
travel properties homes estates transport haulage removals tyres glass steel metals plastics fabrics furniture
flooring roofing scaffolding electrics heating nursery nurseries guarderia vivero produce
vinoteca vinos heladeria churreria pizzeria taberna cocteleria marisqueria polleria charcuteria drogueria perfumeria
herboristeria merceria jugueteria queseria almazara aceites embutidos jamones
winery wines grocers greengrocer greengrocers butchers bakers barbers salon tavern opticians chemist chemists vets
""".split())
_BUSINESS_CUE = re.compile(r"\b(?:cliente|clientes|proveedor|proveedora|proveedores|customer|customers|client|clients|"
                           r"supplier|suppliers|vendor|empresa|company|firm|negocio)\b")
# What the assistant asks about a customer's payments brings that customer in by name: "¿Ha pagado ya Construcciones
# Pereda?", "Has Harbor Foods paid the last invoice?".
_PAYMENT_CUE = re.compile(r"\b(?:facturas?|invoices?|cobro|cobrar|pagado|paid|pay|owes?|debe|deben)\b")


def looks_like_company(name: str) -> bool:
    """A business's name: a company word or a legal suffix in it."""
    words = re.findall(r"[a-z0-9]+", fold(name))
    return any(w in COMPANY_WORDS for w in words) or tuple(words[-2:]) in LEGAL_SUFFIXES or \
        tuple(words[-1:]) in LEGAL_SUFFIXES


def introduced_subjects(s: Sentence, known: tuple[KnownContact, ...], asked: bool = False) -> tuple[KnownContact, ...]:
    """Businesses a sentence brings in by name ("tenemos un cliente nuevo, Hierros Olano"), as named
    subjects the next sentences may go on about; never a greeting, a weekday or a lone opening word. `asked`: the
    sentence is the assistant's question, where one asked to pay is brought in too."""
    business = bool(_BUSINESS_CUE.search(s.low) or (asked and _PAYMENT_CUE.search(s.low)))
    out = []
    for text, start, end in names_in(s):
        key = " ".join(name_tokens(text))
        if not key or key in _index(known).named_ids or in_place(s, start, end):
            continue
        if re.fullmatch(r"[A-Z]{2}", text) and re.match(r"\s?\d", s.text[end:]):
            continue  # a tax number's country ("GB 284 1937 56"), no one's name
        company = looks_like_company(text)
        opens = not s.text[:start].strip("¿¡\"'«“ ")  # the sentence's first word ("¿Ha pagado ya...?")
        if company or (business and (not opens or " " in text)):
            out.append(KnownContact(id=key, name=text, kind="named"))
    return tuple(out)


# A street, square or road: where someone is, not who they are ("el dentista de la calle Alcalá", "the physio on
# Elm Street", "la peluquería de c/ Toledo"). The word before a name, or the name's own first or last word.
_PLACE_BEFORE = re.compile(r"(?:^|[\s(])(?:calle|c/|avenida|avda\.?|av\.|plaza|pza\.?|paseo|ronda|camino|carretera|"
                           r"travesia|glorieta|barrio|poligono|street|road|avenue|square|lane)\s*"
                           r"(?:(?:de|del|de la|de los|de las|of)\s+)?$")
_PLACE_WORD = re.compile(r"^(?:calle|avenida|avda|plaza|paseo|ronda|camino|carretera|travesia|glorieta|barrio|"
                         r"poligono)\b|\b(?:street|st|road|rd|avenue|ave|square|lane|boulevard|blvd)$")
# Where someone is with no name at all: "el fisio de enfrente", "the bakery across the street", "upstairs".
PLACED = re.compile(r"\b(?:de enfrente|de al lado|de arriba|de abajo|del barrio|de la esquina|across the (?:street|road)|"
                    r"next door|upstairs|downstairs|down the (?:street|road)|round the corner|around the corner)\b")


# Where a group of customers is, or where orders go: "los clientes de Lanzarote", "customers in Portugal", "los
# envíos a Canarias", "orders for Ibiza". Not orders "de"/"from" someone ("los pedidos de Hierros Olano" are theirs),
# nor orders "a"/"to" someone: "hacemos los pedidos a Lácteos Norte" places them with a supplier.
_GROUP_PLACE_BEFORE = re.compile(r"(?:^|\s)(?:clientes|customers|clients|buyers|compradores)\s+(?:de|del|from|in|on|en)"
                                 r"\s+(?:(?:the|la|las|los|el)\s+)?$|(?:^|\s)(?:envios|entregas|portes|shipments|"
                                 r"deliveries|parcels|paquetes)\s+(?:a|al|para|hacia|to|for)\s+(?:(?:the|la|las|los|el)\s+)?$|"
                                 r"(?:^|\s)(?:pedidos|orders)\s+(?:para|hacia|for)\s+(?:(?:the|la|las|los|el)\s+)?$")


# Orders or customers "de"/"from" a name are that name's, unless it is a known region ("los pedidos de Mallorca").
_GROUP_FROM_BEFORE = re.compile(r"(?:^|\s)(?:pedidos|orders|envios|entregas|shipments|deliveries|clientes|customers|"
                                r"clients)\s+(?:de|del|from)\s+(?:(?:the|la|las|los|el)\s+)?$")


# Where a home is ("our holiday home in Cornwall", "tenemos un piso en Benidorm"), or a known place after "in"/"en".
_HOME_IN_BEFORE = re.compile(r"\b(?:home|house|place|cottage|flat|apartment|cabin|villa|chalet|casa|piso|apartamento|"
                             r"casita)\s+(?:\w+\s+)?(?:in|en|at|near|cerca de)\s+$")
_IN_BEFORE = re.compile(r"\b(?:in|en)\s+$")


def in_place(s: Sentence, start: int, end: int) -> bool:
    """The capitalised words at [start, end) name a street, square or road, or where a group of customers is or
    orders go or come from: not a person or a business (unless a company by its words, "los clientes de Hierros
    Olano"; orders "de" a name are that name's unless it is a known region, places.PLACES)."""
    before, said = s.low[:start], s.low[start:end].strip(" .,")
    return bool(_PLACE_BEFORE.search(before) or _PLACE_WORD.search(said) or _HOME_IN_BEFORE.search(before) or
                (_IN_BEFORE.search(before) and said in PLACES) or
                (_GROUP_PLACE_BEFORE.search(before) and not looks_like_company(s.text[start:end])) or
                (_GROUP_FROM_BEFORE.search(before) and said in PLACES))


def names_a_place(s: Sentence) -> bool:
    """The sentence says where someone is: a street or square by name, or "de enfrente", "upstairs"..."""
    return bool(PLACED.search(s.low) or any(in_place(s, a, b) for _, a, b in name_runs(s, 0, len(s.text))))


# A verb of "we" opening a sentence ("Hemos cambiado...", "Tenemos..."): no one's name.
_WE_VERB = re.compile(r"\w{2,}(?:amos|emos|imos)")


def name_runs(s: Sentence, start: int, end: int) -> list[tuple[str, int, int]]:
    """Capitalised word runs inside [start, end), leading filler words dropped."""
    runs = []
    for m in _CAP_RUN.finditer(s.text, start, end):
        words = m.group().split()
        offset = m.start()
        while words and (fold(words[0]).strip(".,") in _RUN_STOP or _WE_VERB.fullmatch(fold(words[0]).strip(".,"))):
            offset = s.text.index(words[0], offset) + len(words[0])
            words = words[1:]
        # "S.L." after a comma is the previous name's suffix, not a name of its own.
        if words and tuple(re.findall(r"[a-z0-9]+", fold(" ".join(words)))) not in LEGAL_SUFFIXES:
            text = " ".join(words).rstrip(".,")
            begin = s.text.index(words[0], offset)
            runs.append((text, begin, begin + len(text)))
    return runs


NAME_STOP = {"al", "a", "manana", "luego", "despues", "mas", "tarde", "hoy", "cuando", "si", "por", "en", "de",
              "btw", "fyi", "lol", "jaja", "jajaja",
              "para", "esta", "este", "ahora", "ya", "otra", "otro", "pronto", "back", "tomorrow", "later", "at",
              "on", "when", "tonight", "now", "if", "asap", "soon", "the", "an", "please", "porfa", "y", "e",
              "que", "and", "o", "or", "pero", "but", "tiene", "tengo", "es", "is", "has", "vive", "trabaja",
              "lives", "works", "con", "with", "from", "del", "la", "el", "lo", "un", "una", "su", "mi", "tu",
              "usted", "tú", "ella", "he", "she", "it", "to", "in", "of", "for", "ahi", "aqui", "eso",
              "autonomo", "autonoma", "nuevo", "nueva", "cliente", "proveedor", "ignora", "ignore", "olvida",
              "sistema", "system", "admin", "administrador"}


def name_at(s: Sentence, start: int, strong: bool) -> str | None:
    """A person's name starting at start: capitalised words, or lower case after a strong cue ("me llamo")."""
    m = re.match(r"\s*([^\W\d_][\w'\-]*(?:[ ]+[^\W\d_][\w'\-]*){0,3})", s.text[start:])
    if not m:
        return None
    words = []
    for word in m.group(1).split():
        if fold(word) in NAME_STOP:
            break
        capital = word[0].isupper()
        if not words and not capital and not strong:
            return None
        if words and capital != words[0][0].isupper():
            break
        words.append(word)
        if len(words) == (3 if capital else 2):
            break
    if not words:
        return None
    name = " ".join(words)
    return name if name[0].isupper() else name.title()


# How many words a name typed in lower case may take before the fact's cue ("construcciones pereda nos paga...").
LOWER_NAME_WORDS = 4
# Words after a name and before its verb: pronouns, adverbs, a negation and the verbs to be and to have
# ("... nos paga", "... ya paga", "... no reparte", "... solo abre", "... are closed").
_NAME_ENDS = frozenset("""nos me te se que ya ahora siempre tambien nunca todavia aun no solo still always now never
only just also are son estan han have""".split())
# Prepositions, adverbs of time and manner, and auxiliaries: a name typed in lower case never runs on into them
# ("trabajamos con reformas galan desde marzo", "we don't work with harbor logistics anymore", "bright paints
# recently moved...", "bellini catering won't open"), nor into a Spanish adverb in -mente ("muebles soler
# ultimamente tarda"; `_NAME_BREAK`, four letters before it at least, so "Clemente" stays a name).
_NAME_BREAKS = frozenset("""desde hasta durante tras antes sin sobre entre hacia segun mediante aun todavia tampoco
entonces apenas casi otra vez luego pronto since until till after before during over about around via without
anymore any longer yet again already lately recently currently usually normally nowadays meanwhile
is was will wont doesnt isnt cant didnt wasnt won't doesn't isn't can't didn't wasn't estara sera
really actually truly totally definitely probably mainly mostly even them him her you me us
last next weekend week month year yesterday today tomorrow tonight others everyone everybody someone somebody
anyone""".split())
_NAME_BREAK = re.compile(r"\w{4,}mente")
# Verbs a note on a business goes on with after its name ("muebles soler cierra en agosto", "harbor foods closes
# on mondays"): a name typed in lower case stops before them.
_NOTE_VERB = re.compile(
    r"(?:cierr|cerr|abr|sirv|entreg|repart|tra|mand|envi|pag|deb|cobr|compr|vend|trabaj|llev|factur|cambi|abon|mud)"
    r"(?:a|an|e|en|io|aron|ieron)|cerro|cambio|subio|(?:clos|open|deliver|ship|pay|owe|charg|buy|sell|work|mov|send|"
    r"bring|order|chang|rais|switch)"
    r"(?:s|es|ed)?|shuts?|reopens?|paid|sold|bought|sent|brought")
# What goes before a business named in the middle of a sentence typed in lower case: dealing with it ("ya no
# trabajamos con reformas galan", "we stopped working with harbor logistics") or someone's role there ("the
# manager at harbor foods"), each language with its own prepositions.
_NAME_LEAD = re.compile(
    r"\b(?:(?:trabaj\w*|compr\w*|vend\w*|pag\w*|contact\w*|encargad[oa]|gerente|jef[ea]|responsable|duen[oa])"
    r" (?:con|a|al|de|en)|(?:work\w*|buy\w*|bought|sell\w*|sold|pay\w*|paid|deal\w*|contact\w*|manager|owner|boss)"
    r" (?:with|from|to|at|of))$")
# A company word after one of these is a description, not a name: "la asesoría laboral", "our workshop" ("a" is
# also Spanish "to": "le compramos a hierros olano").
_DESCRIBED = frozenset("el la los las un una unos unas mi mis su sus nuestro nuestra nuestros nuestras the an our "
                       "my their".split())


def ends_name(folded: str) -> bool:
    """A (folded) word no name typed in lower case runs on into: a preposition, an adverb of time, manner or
    degree, a time ("from last weekend"), a pronoun ("having them around")."""
    return folded in _NAME_BREAKS or bool(_NAME_BREAK.fullmatch(folded))


def typed_lower(s: Sentence) -> bool:
    """The sentence was typed without capitals (its first letter is the reader's)."""
    return not any(c.isupper() for c in s.text[1:])


# Words of a group spoken of as a whole, never of a business's name: "all new customers pay upfront".
_GROUP_WORDS = frozenset("all every any most todos todas cualquier customers clients clientes".split())


def typed_lower_name(text: str) -> str | None:
    """The name a text typed in lower case opens with, up to the fact's cue: its words up to the first word
    that names no one or is a note's verb ("Harbor foods pays us at 30 days" -> "Harbor foods", "muebles soler
    cierra en agosto" -> "muebles soler"); None when that is one word (the capitalised first word already says
    it) or more than LOWER_NAME_WORDS."""
    words = []
    for word in text.split():
        bare = word.rstrip(".,;:")
        folded = fold(bare)
        if folded in _NAME_ARTICLES and words and fold(words[-1]) in COMPANY_WORDS and bare == word:
            words.append(bare)  # "vinoteca el tonel", "bar la plaza": an article after a company word
            continue
        if folded in NOT_NAMES or folded in FUNCTION_WORDS or folded in _NAME_ENDS or folded in NAME_STOP or \
                folded in _GROUP_WORDS or ends_name(folded) or folded in COUNTS or _NOTE_VERB.fullmatch(folded) or \
                not bare.isalpha():
            break
        words.append(bare)
        if bare != word:
            break  # "muebles soler, ..." ends at its comma
    while words and fold(words[-1]) in _NAME_ARTICLES:
        words.pop()
    return " ".join(words) if 2 <= len(words) <= LOWER_NAME_WORDS else None


_NAME_ARTICLES = frozenset({"el", "la", "los", "las"})


def lower_name_runs(s: Sentence) -> list[tuple[str, int, int]]:
    """Businesses named in a sentence typed in lower case, as (name, start, end): the words it opens with when
    they hold a company word or a note's verb follows them ("muebles soler cierra en agosto"), a company word and
    the name words after it ("la oficina de frutas lopez"), and the name after dealing with someone or a role
    there ("ya no trabajamos con reformas galan", "the manager at harbor foods"). Streets are not names."""
    if not typed_lower(s):
        return []
    spans = [(m.group(), m.start()) for m in re.finditer(r"\S+", s.text)]
    folded = [fold(word).strip(".,;:!?") for word, _ in spans]
    runs, i = [], 0
    while i < len(spans):
        name = typed_lower_name(" ".join(word for word, _ in spans[i:i + LOWER_NAME_WORDS + 1]))
        start = spans[i][1]
        clause = i > 0 and (folded[i - 1] in _CLAUSE_OPENERS or spans[i - 1][0].endswith((",", ";", ":")))
        if name and _names_business(name, folded, i, clause) and not in_place(s, start, start + len(name)):
            runs.append((name, start, start + len(name)))
            i += len(name.split())
        else:
            i += 1
    return runs


# Words after which a clause begins: what follows opens it as a sentence's first word does ("ojo que bellini
# catering no abre el lunes", "heads up, harbor foods closes early").
_CLAUSE_OPENERS = frozenset("que that y and pero but".split())


def _names_business(name: str, folded: list[str], i: int, clause_start: bool = False) -> bool:
    """The lower-case words at word i name a business (see `lower_name_runs`); `clause_start` when a clause
    begins there."""
    before = " ".join(folded[max(0, i - 2):i])
    if folded[i] in COMPANY_WORDS:
        return i == 0 or folded[i - 1] not in _DESCRIBED
    if i == 0 or clause_start:
        if re.fullmatch(r"\w+(?:amos|emos|imos)", folded[i]):
            return False  # "hacemos reformas...", "tenemos furgonetas...": a verb of "we", not a name
        after = [w for w in folded[i + len(name.split()):] if w not in _NAME_ENDS and w not in FUNCTION_WORDS and
                 not ends_name(w)]
        # "harbor foods closes...", "kingsley motors has moved...".
        if (after and _NOTE_VERB.fullmatch(after[0])) or fold(name.split()[-1]) in COMPANY_WORDS:
            return True
    return i > 0 and bool(_NAME_LEAD.search(before))


def dealt_with(s: Sentence, start: int) -> bool:
    """The name at `start` follows dealing with it or a role there ("ya no trabajamos con reformas galan", "we
    stopped buying from bright paints"): a business whoever the sentence is about."""
    return bool(_NAME_LEAD.search(" ".join(fold(w).strip(".,;:!?") for w in s.text[:start].split()[-2:])))


# Holidays written in capitals: when, never who ("En Semana Santa cerramos", "closed on Boxing Day").
_HOLIDAY = re.compile(r"\b(?:semana santa|dia de reyes|ano nuevo|boxing day|good friday|easter (?:monday|sunday)|"
                      r"new year'?s?(?: day| eve)?|bank holidays?|black friday)\b")


def names_in(s: Sentence) -> list[tuple[str, int, int]]:
    """The names of a sentence: its capitalised runs, and in one typed in lower case the businesses it names in
    full ("Muebles soler cierra en agosto": "Muebles soler", not the reader's capitalised "Muebles"); no holiday."""
    lower = lower_name_runs(s)
    runs = [r for r in name_runs(s, 0, len(s.text)) if not any(a <= r[1] < b for _, a, b in lower)]
    holidays = [m.span() for m in _HOLIDAY.finditer(s.low)]
    return sorted((r for r in lower + runs if not any(a < r[2] and r[1] < b for a, b in holidays)),
                  key=lambda r: r[1])
