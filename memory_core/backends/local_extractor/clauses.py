"""What kind of sentence this is: a question, an order, a hypothetical, an injection, a request to remember;
and the lead-in that frames a statement without being part of it ("recuerda que", "corrección:")."""
from __future__ import annotations

import re

from memory_core.backends.local_extractor.text import Sentence, fold
from memory_core.domain.dates import MONTH_WORD, WEEKDAY_WORD

_REMIND_WHAT_IS = (r"(?:remind me|recuerdame)(?=(?:\s+que|\s+that)?\s+(?:my|our|the|his|her|their|mi|mis|nuestr[oa]s?|el|la|"
                   r"los|las|[a-z]+'s)\b[^.?!]{0,60}?\b(?:is|are|'s|es|son|cumple|turns)\b)")
REMEMBER_PREFIX = re.compile(
    r"^(?:(?:oye|vale|ok|bueno|pues|por cierto|hola)\s*,?\s*)*(?:(?:por favor|porfa)\s*,?\s*)?"
    r"(?:recuerda(?:lo)?|acuerdate(?: de)?|apunta(?:te)?|anota|guarda(?:te)?|ten en cuenta|toma nota(?: de)?|"
    r"para que lo sepas|que sepas|(?:para )?que conste|quiero que recuerdes|no (?:te )?olvides(?: de)?|"
    r"que no se (?:me|te) olvide|"
    r"(?:please )?remember|note(?: down)?|make a note|keep in mind|bear in mind|fyi|for the record|just so you know|"
    # "remind me my mum's birthday is the 3rd of April", "recuérdame que el cumple de mi madre es el 3": what is, to
    # remember; "remind me to call her" stays an order.
    + _REMIND_WHAT_IS + r")"
    r"(?:\s+(?:que|that|esto|this))?\s*[:,]?\s*")
# Lead-ins that frame a statement without being part of it: requests to remember and corrections. The
# bare words ("ojo", "update") only count before a colon or comma: "update my address" is an order.
_LEAD_IN = re.compile(
    r"^(?:(?:oye|vale|ok|bueno|pues|hola|ah|eh|mira|perdona|perdon|sorry|actually|oh)\s*,?\s+)*(?:(?:"
    r"que no se (?:me|te) olvide|no (?:te )?olvides(?: que| de que)?|guardate(?: esto)?|acuerdate(?: de)?|"
    r"apuntate|recuerda(?:lo)?|apunta|anota|ten(?:lo|edlo)? en cuenta|toma nota(?: de)?|para la proxima(?: vez)?|"
    r"(?:para )?que conste|me equivoque|me he equivocado|lo de antes (?:estaba mal|no era asi)|no es asi|"
    r"rectifico|corrijo|(?:please )?(?:remember|note(?: down)?(?: for next time)?|make a note|keep in mind|"
    r"bear in mind)|fyi|for the record|just so you know|"
    # what it is for, before a colon: "para que lo tengas en cuenta cuando te pida recetas:", "so you know for when I
    # ask for recipes:"
    r"(?:para\s+)?que\s+(?:lo\s+)?(?:tengas|tengais|tenga)\s+en\s+cuenta(?:\s+(?:cuando|para)\s+[^:]{1,50}(?=:))?|"
    r"so (?:that )?you (?:know|have it)(?:\s+(?:for )?when\s+[^:]{1,50}(?=:))?)"
    r"(?:\s+(?:que|that|esto|this|de que))?\s*[:,.!-]*\s*"
    # what was said before, taken back: "olvida lo que te dije de Distribuciones Mar, ...", "forget what I said, ..."
    r"|(?:olvida|olvidate de)\s+lo\s+que\s+te\s+(?:dije|he dicho)(?=\s+de\s|\s*[,:.])|forget what i (?:said|told you)(?=\s+about\s|\s*[,:.])"
    r"|(?:importante|ojo|dato|nota|error(?: mio)?|correccion|no,? no|cambio de planes|correction|scratch that|scrap that|"
    r"my mistake|change of plans?|update|heads up)"
    # when the change holds from, between the word and its colon: "change of plan from next week:"
    r"(?:\s+(?:from|starting|as of|a partir de(?:l)?|desde)\s+[^:,.!]{1,25}?)?\s*[:,.!-]+\s*(?:que\s+|that\s+)?)")
_QUESTION_START = re.compile(
    r"^(?:y\s+|and\s+)?(?:(?:a|de|con|en|para|por|desde|hasta)\s+)?(?:que|cual|cuales|cuanto|cuanta|cuantos|cuantas|"
    r"cuando|donde|adonde|quien|quienes|por que|sabes|what|which|when|where|how|who|whom|why|do|does|did|is|"
    r"are|was|were|can|could|should|would|will|have|has)\b(?!'t|n't)")
# "When I was younger, we had money problems", "cuando era pequeña, vivíamos en Soria": a time clause, a comma
# and the main clause, with no question mark, tell what happened then.
_TIME_CLAUSE = re.compile(r"^(?:when|whenever|while|back when|cuando|mientras)\b[^,?¿]{3,80},\s*\w")
# "Quien lleva las facturas en Acme es Marisa" starts like a question but names its answer.
_RELATIVE_START = re.compile(r"^(?:quien|la que|el que|who)\b")
_NAMED_ANSWER = re.compile(r"\b(?:es|is)\s+[A-ZÁÉÍÓÚÑ]")


# "Acme paga a 60 días, ¿vale?": a statement with a tag ("¿no?", "¿verdad?" ask for confirmation: still questions).
_TAG_QUESTION = re.compile(r"[,\s]*¿?\s*(?:vale|ok|okay|de acuerdo|sabes)\s*\?+\s*$")


def is_question(s: Sentence) -> bool:
    if "?" in _TAG_QUESTION.sub("", s.low) or "¿" in _TAG_QUESTION.sub("", s.low):
        return True
    if _RELATIVE_START.match(s.low) and _NAMED_ANSWER.search(s.text):
        return False
    clause = _TIME_CLAUSE.match(s.low)
    if clause and not is_order(Sentence.of(s.text[clause.end() - 1:])):
        return False  # "cuando llegue el pedido, mándame la factura" is an order for later, not a fact
    return bool(_QUESTION_START.match(s.low)) and not _SUBJECTLESS.match(s.low) and not _SINCE.match(s.text)


# "Desde que nació la niña ya no salgo a correr", "hasta que vuelva Marta lo lleva Iván": a time clause (no mark, no
# accent on "que"), not "¿desde qué hora...?".
_SINCE = re.compile(r"(?i)^(?:y\s+)?(?:desde|hasta|para|antes de|despues de|después de)\s+que\b")


# A statement typed without its "I" ("Was super nervous last week when I shared my book", "Have been comforted by
# the good times we had"): the auxiliary is followed by no subject, and the sentence speaks of the writer, not
# the listener. (Spanish drops its subjects everywhere and asks with no such inversion.)
_SUBJECTLESS = re.compile(r"^(?:was|were|have been|had been|did)\s+(?!(?:i|you|he|she|it|we|they|there|the|a|an|this|"
                          r"that|your|his|her|their|my|our|anyone|anybody|everyone|someone|something)\b)\w+"
                          r"(?=.*\b(?:i|my|me|we|our|us)\b)(?!.*\b(?:you|your)\b)")


def statement(s: Sentence) -> bool:
    """A sentence that may state a fact: not empty, not a question, not a hypothetical, not an injection."""
    if not s.low or is_question(s):
        return False
    # "sí" (yes) folds to "si" (if): hide it before looking for hypotheticals; so is a standing term's
    # condition ("5% de rebaja si paga al contado"): a rule, not a hypothesis.
    text = _STANDING_CONDITION.sub(r"\1 ~", re.sub(r"\b[sS][íÍ]\b", "~", s.text))
    # "even if it's a small one", "como si fuera ayer", "I doubt if I'm making a difference": no condition.
    text = _NOT_A_CONDITION.sub(" ~", _FEELS_ABLE.sub(" ~", text))
    hypothetical = _HYPOTHETICAL.search(fold(text))
    if hypothetical and _told_before(fold(text), hypothetical.start()):
        hypothetical = None
    return not (hypothetical or _INJECTION.search(s.low) or ONE_OFF.search(s.low))


# What holds this once ("al pedido de hoy hazle un 10%, solo esta vez", "just this once, deliver at 6"): no standing fact.
ONE_OFF = re.compile(r"\b(?:solo|solamente|nada mas|only|just)\s+(?:por\s+)?(?:esta vez|este pedido|por hoy|this once|"
                     r"this time|this order|for today)\b|\bpor esta vez\b|\bthis time only\b|\bjust (?:the )?once\b|"
                     r"\b(?:al|en el|para el|del) pedido de (?:hoy|manana)\b|\b(?:a|en|para) este pedido\b|"
                     r"\b(?:on|for|in) (?:today'?s|tomorrow'?s|this) (?:order|delivery|invoice)\b")


# "I also made a chocolate cake the other day, maybe you'd like it", "I just visited a travel agency to see what
# the requirements would be": a thing done, told first, then a guess or a purpose; the guess does not make the
# thing done a hypothesis. "I wondered if...", "I was thinking maybe...", "If I had...", "I'd love to..." stay.
_TOLD_FIRST = re.compile(
    r"^(?:(?:well|so|and|also|oh)\s+)?(?:(?:i|we)\s+(?:just\s+|finally\s+|recently\s+|also\s+|even\s+|actually\s+)?"
    r"(?:[a-z]{2,}ed|ran|saw|took|met|got|made|won|began|bought|found|gave|came|brought|spent|left|caught|heard|read|"
    r"wrote|sold|built|taught|drove|flew|swam|ate|drank|sang|went|had|did)|(?:y\s+|pues\s+|ayer\s+|tambien\s+)?"
    r"(?:fui|fuimos|estuve|estuvimos|tuve|tuvimos|hice|hicimos|visite|visitamos|compre|compramos|termine|terminamos|"
    r"empece|empezamos|aprendi|aprendimos|conoci|conocimos|(?:he|hemos)\s+[a-z]+(?:ado|ido)))\b")
# Words told before the guess: enough to be a thing done of its own ("I wondered if" is not).
TOLD_WORDS = 3


def _told_before(low: str, at: int) -> bool:
    m = _TOLD_FIRST.match(low)
    return bool(m) and m.end() < at and len(re.findall(r"[a-z']+", low[m.end():at])) >= TOLD_WORDS


# How the writer feels they could do something ("I always feel like I could write a whole movie", "siento que podría
# escribir una película entera"): a feeling told, not a hypothesis.
_FEELS_ABLE = re.compile(r"(?i)\b(?:feel|feels|felt|feeling)\s+(?:like|that)\s+(?:i|we)\s+could\b|"
                         r"\b(?:siento|sentia|senti|sentimos)\s+que\s+(?:podr[ií]a|podr[ií]amos)\b")
# "vivo en Leganés, por si me buscas cosas cerca": "por si" is "in case", no condition on what was told.
_NOT_A_CONDITION = re.compile(r"(?i)\b(?:even|as|doubt|wonder|see|ask|asked|know|sure|incluso|tambien|también|como|aun|por)\s+(?:if|si)\b")
_STANDING_CONDITION = re.compile(r"(?i)\b(descuento|discount|rebaja|dto\.?|off)\s+(?:si|if)\b")


# What may come before an order: a yes to the assistant's offer, an "and" ("sí, y recuérdame llamar a Talleres
# García mañana", "yes, and send a copy to their accounts email").
_BEFORE_ORDER = re.compile(r"^(?:(?:si|yes|yeah|yep|ok|okay|vale|claro|sure|and|y|also|tambien|ademas|plus)\b[\s,.!]*)+")
# When, and to whom, said before the order ("Hoy a Pinturas Sol llévales el pedido por la tarde"): the one it is
# for comes first only before a verb that names them again ("llévales", "mándale").
_WHEN_AND_WHOM = re.compile(r"^(?:(?:hoy|manana|esta tarde|esta manana|luego|ahora|today|tomorrow|tonight|later)\b"
                            r"[\s,]*)?(?:al?\s+(?:[\w&'.-]+\s+){1,4}?(?=[a-z]+(?:le|les)\b))?")


def is_order(s: Sentence) -> bool:
    """An order for now ("mándale la factura"), not a standing instruction ("mándale siempre...")."""
    start = _BEFORE_ORDER.match(s.low)
    low = s.low[start.end():] if start else s.low
    return bool(_ORDER_START.match(low[_WHEN_AND_WHOM.match(low).end():])) and not DURABLE.search(s.low)


# The words of a maybe (folded): here and in what a contact's terms are said as (fallback.TENTATIVE).
MAYBE = r"a lo mejor|quizas?|tal vez|maybe|perhaps|puede que|might"
# A refusal after what someone wanted: it stays in that clause's unit (units._HEDGE) and makes it no fact.
REFUSED = (r"(?:pero\s+|but\s+|y\s+|and\s+)?(?:(?:le|les)\s+(?:he|hemos)\s+dicho\s+que\s+no|no\s+(?:le|les)\s+(?:he|hemos)\s+"
           r"dejado|(?:i|we)\s+(?:said|told\s+(?:them|him|her))\s+no|(?:i|we)\s+(?:refused|turned\s+(?:it|them)\s+down))\b")
_HYPOTHETICAL = re.compile(
    r"\b(?:si(?!\s*[,.!])|if|supongamos|suponiendo|supon|imagina|imaginemos|imagine|suppose|supposing|hipoteticamente|"
    rf"hypothetically|en caso de que|en el caso de que|what if|ojala|{MAYBE}|"
    r"seria|podria|deberia|pagaria|tendria|would(?! rather)|could|creo que|me parece que|"
    r"supongo que|no estoy segur[oa]|no se si|i think(?! (?:of|about)\b)|i guess|not sure|no es seguro|"
    r"no esta confirmad[oa]|sin confirmar|unconfirmed|not confirmed)\b|,\s*creo\W*$|"
    # what someone asked for and was refused ("quiere pagar a 120 días, pero le he dicho que no")
    rf"{REFUSED}|"
    # what someone tried to get from us: an attempt, no standing fact ("Bellweather tried to haggle us down to 95p")
    r"\b(?:tried|trying|attempted)\s+to\s+(?:haggle|bargain|negotiate|knock|beat|talk|push|get)\b|"
    r"\b(?:intent(?:o|aron|ado)|quiso|quisieron)\s+(?:regatear|negociar|rebajar|bajar|sacar)\w*|"
    # "igual subimos un 5%": "igual" opening a clause before its verb is "maybe" (not "igual que", "igual de").
    r"(?:^|[,;]\s*)igual\s+(?!que\b|de\b|para\b|a\b|con\b|en\b|el\b|la\b|los\b|las\b|un\b|una\b)\w+")
_INJECTION = re.compile(
    r"\b(?:ignor\w*|olvida\w*|forget|disregard|omite)\b.{0,40}\b(?:instruc\w*|indicaciones|reglas|rules|prompt|"
    r"anterior\w*|previous|above|todo lo)|\b(?:system prompt|prompt del sistema|you are now|ahora eres|"
    r"a partir de ahora eres|act as|actua como|jailbreak)\b")
# What a business keeps records of: asking to see them is a request for now.
_RECORDS = (r"(?:facturas?|invoices?|presupuestos?|quotes?|gastos|expenses|informes?|reports?|resumen|summary|saldo|"
            r"balance|pedidos|orders|cobros|pagos|payments|ventas|sales|datos|data|contactos|contacts|clientes|"
            r"customers|albaranes|cuentas|accounts|movimientos|transactions)\b")
_ORDER_START = re.compile(
    r"^(?:(?:oye|vale|ok|bueno|pues|porfa|por favor|please)\s*,?\s*)*(?:"
    r"factura|facturale|facturales|emite|envia|enviale|enviales|enviame|manda|mandale|mandales|mandame|crea|creame|"
    r"haz|hazme|prepara|preparame|genera|generame|borra|elimina|anade|busca|buscame|muestrame|ensename|"
    r"recuerdame|calcula|calculame|cambia|cambiame|pon|ponme|pasame|dame|dime|revisa|comprueba|descarga|sube|"
    r"llevale|llevales|llevame|entregale|entregales|cobrale|cobrales|"
    r"abre|cancela|anula|llama|escribe|escribele|contesta|responde|reclama|reclamale|puedes|podrias|"
    # Asking the assistant to do something now ("quiero que me avises", "necesito que me prepares", "I want you to
    # remind me"), and wanting to see or fetch the business's records ("me gustaría consultar los cobros
    # pendientes", "I'd like to check the unpaid invoices"): requests, not the writer's wishes or plans.
    r"(?:quiero|quisiera|necesito|me gustaria) que (?:me |le |les |nos )?(?:envies|mandes|hagas|prepares|factures|"
    r"crees|pases|busques|digas|llames|recuerdes|avises|ayudes|muestres|ensenes|expliques|calcules|revises|"
    r"compruebes|cambies|borres|anadas|pongas|des|descargues|exportes|imprimas)|"
    r"(?:i want|i'?d like|i would like|i need) you to|"
    r"(?:quiero|quisiera|necesito|me gustaria|i want to|i'?d like to|i would like to|i need to)\s+(?:"
    r"consultar|revisar|comprobar|exportar|descargar|imprimir|saber|check(?! out)|review|export|download|print|know|"
    r"(?:ver|mirar|see|view|look at)\s+(?:(?:\S+\s+){0,3}?" + _RECORDS
    + r"|(?:cuanto|cuantos|cuantas|cuando|que|quien|como|donde|what|how|when|who|where|which)\b))|"
    # A channel or account to link now ("Quiero vincular mi WhatsApp"): the linking flow's, not a preference.
    r"(?:vincula|vinculame|enlaza|link|unlink|(?:quiero|quisiera|necesito|me gustaria|i want to|i'?d like to|"
    r"i need to)\s+(?:vincular|desvincular|enlazar|conectar|link|unlink|connect))\s+(?:mi|mis|el|la|este|esta|"
    r"my|the|this)?\s*(?:whatsapp|telegram|cuenta|numero|telefono|movil|account|number|phone)|"
    r"invoice|send|create|make|prepare|generate|delete|remove|add|find|search|show|tell|remind|calculate|"
    r"change|put|give|list|check|download|upload|open|cancel|call|write|reply|pay|charge|email|can you|"
    r"could you)\b")
DURABLE = re.compile(r"\b(?:siempre|a partir de ahora|de ahora en adelante|en adelante|de aqui en adelante|nunca|jamas|"
                      r"cada vez que|always|from now on|in future|in the future|going forward|never|whenever|"
                      r"each time|every|(?:los|todos los)\s+(?:lunes|martes|miercoles|jueves|viernes|sabados|domingos)|"
                      r"(?:mon|tues|wednes|thurs|fri|satur|sun)days|"
                      r"(?:mon|tues|wednes|thurs|fri|satur|sun)day\s+(?:mornings|afternoons|evenings|nights))\b")


def strip_lead(s: Sentence) -> Sentence:
    """The sentence without "recuerda que", "corrección:" and the like in front."""
    for regex in (REMEMBER_PREFIX, _LEAD_IN):
        m = regex.match(s.low)
        if m and m.end() and m.end() < len(s.low):
            s = Sentence.of(s.text[m.end():])
    return s


# A standing fact said with the day it holds from ("from next month our closing day is going to be Sunday", "a partir
# de enero cerramos los sábados"): no event on that day. Time away ("a partir del lunes estoy de vacaciones") and a
# span with its end ("from the 10th to the 24th") still are.
_HOLDS_FROM = re.compile(rf"\b(?:from|starting|as of|a partir de(?:l)?|desde)\s+(?:next|this|the|el|la|este|esta|"
                         rf"manana|tomorrow|today|hoy|proximo|proxima|{MONTH_WORD}|{WEEKDAY_WORD})\b")
_AWAY_OR_SPAN = re.compile(rf"\b(?:vacaciones|holidays?|de baja|de permiso|on leave|away|viaje|trip|fuera)\b|(?<!day )\boff\b|"
                           rf"\b(?:to|until|till|through|hasta|al)\s+(?:the\s+|el\s+|la\s+)?(?:\d|{MONTH_WORD}\b|"
                           rf"{WEEKDAY_WORD}\b|end\b|fin\b)")


def holds_from(low: str) -> bool:
    """The folded message tells a standing fact and the day it holds from (`_HOLDS_FROM`), no time away or span."""
    return bool(_HOLDS_FROM.search(low)) and not _AWAY_OR_SPAN.search(low)
