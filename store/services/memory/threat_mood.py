"""Sentence mood for the memory gate's learned signal: is a clause an order, and of what kind.

Word classes (``threat_lexicon``) say what a clause is about: an approval, a
sudoers file, an API key. A fact and an order about the same setting share
those words ("approval is off" and "turn approval off"), so the model also
needs to know how the clause is said. ``moods(folded, words)`` names the
moods a segment holds; ``threat_model`` adds them to its word classes, so the
weights learn combinations such as *imperative + off + safeguard* or
*expected + agent + send + secret*, in every language at once:

- ``imp``: a clause that opens with a verb in the imperative (after a
  "please", "now" or "also"): "add …", "desactiva …", "schalte … ab",
  "отключи …", 把…/请…, or one that ends in a Japanese order form (しろ,
  してください, すること, ように); and an order in the infinitive, as notes and
  hand-overs put them ("Añadir …", "Ne pas mentionner …", "Не упоминать …",
  German "… bitte herausnehmen" at the clause end).
- ``noneed``: a check or step declared unnecessary, waived or suspended ("no
  longer needed", 不需要, いらない, "ya no hace falta", "plus nécessaire",
  "nicht mehr nötig", "больше не нужны").
- ``expect``: a standing duty put on someone ("is expected to", "is supposed
  to", 应该, ことになっている, "se espera que", "est censé", "wird erwartet",
  "ожидается").
- ``cond``: a conditional standing order ("whenever …", 只要…就, たびに,
  "cada vez que", "chaque fois que", "jedes Mal, wenn", "каждый раз, когда").
- ``permit``: leave given, a step allowed to be skipped or done alone ("can be
  set aside", "is fine", "without asking", 可以直接, てもいい, "puedes", "tu peux",
  "darfst", "ohne Rückfrage", "можно").
- ``cover``: a cover story for a question ("if anyone asks, just say",
  有人问就说, 聞かれたら…と答えて, "si alguien pregunta, di que", "sag einfach",
  "если спросят, скажи").
- ``soft``: a request said politely ("it would help if", "could you", 麻烦,
  と助かる, "sería genial", "ce serait bien", "es wäre … wenn", "было бы").

Lexical and shallow on purpose (no parser, no download): a lookup per
clause-initial word and one regex per mood, cheap enough for the gate's
throughput. Pure; never raises on a ``str``.
"""
from __future__ import annotations

import re

from .literal_gate import LiteralGate
from .literals import required

# Clause starts: after these marks (and at the start of the text).
# NFKC has turned "，：；！？" into ASCII, so a mark followed by a CJK character ends a clause too.
_CLAUSE_SPLIT = re.compile(r"[.!?;:]+(?=\s|$|[\u3040-\u30ff\u3400-\u9fff])|[,\n()]+|[。、]+| - | — ")
_WORD = re.compile(r"[^\W_][\w'’-]*")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff]")

# Words that may come before the verb of an order without changing it.
_LEAD = frozenset("""
    please kindly now also then just simply so and first immediately quietly silently always never do don't
    also, afterwards next finally
    por favor ahora también luego después siempre nunca no y primero
    s'il maintenant aussi puis ensuite toujours jamais ne n' et d'abord
    bitte jetzt auch dann danach immer nie niemals einfach sofort und zuerst
    пожалуйста теперь также потом затем всегда никогда не и сначала сразу просто
""".split())

# Imperative forms of the verbs an order to an agent is made of (second person, and the polite
# forms where they open a clause). English base forms are imperative at a clause start.
_IMPERATIVE = frozenset("""
    add append allow approve curl wget echo chmod accept answer apply assume bypass call change commit comply copy create delete deny
    disable drop email enable execute export fetch follow forget forward give grant hide ignore include insert
    install keep leave let make merge move obey open paste pay post print publish pull push put read remember
    remove rename reply report respond reveal run save say send set share skip start stop store switch tell
    transfer treat trust turn update upload use wire write consider pretend act speak become answer honor honour
    approve prioritize prioritise route replace disregard override mark whitelist allowlist invite download
    añade añádelo agrega agrégalo activa desactiva apaga borra elimina envía envia envíale manda mándale
    reenvía reenvia sube copia pega publica comparte concede otorga da dale dame pon ponlo ejecuta instala crea
    guarda recuerda olvida ignora sigue obedece trata considera responde contesta di dile escribe abre deja
    quita salta omite usa cambia transfiere paga añada agregue active desactive apague borre elimine envíe
    mande reenvíe suba copie pegue publique comparta conceda otorgue dé ponga ejecute instale cree guarde
    recuerde olvide ignore siga obedezca trate considere responda conteste diga escriba abra deje quite omita
    use cambie transfiera pague haz hazlo incluye incluya muestra muestre empieza empiece comienza programa
    programe antepón pon salta sáltate cópiala cópialo envíalo pásale pasa pase añádela menciones digas cuentes
    reveles compartas envíes borres hagas ejecutes muestres uses respondas aceptes aprueba apruebe acepta
    guárdalo recuérdalo lee lea revela revele lanza lance descarga descargue abre abra responde
    ajoute ajoutez active activez désactive désactivez coupe coupez supprime supprimez envoie envoyez
    transfère transférez téléverse téléversez copie copiez colle collez publie publiez partage partagez
    accorde accordez donne donnez mets mettez exécute exécutez installe installez crée créez garde gardez
    retiens retenez oublie oubliez ignore ignorez suis suivez obéis obéissez traite traitez considère
    considérez réponds répondez dis dites écris écrivez ouvre ouvrez laisse laissez retire retirez saute
    sautez utilise utilisez change changez paie payez vire virez fais faites lance lancez passe passez
    commence commencez enregistre enregistrez affiche affichez mentionne mentionnez inclus incluez révèle
    révélez télécharge téléchargez accepte acceptez approuve approuvez lis lisez montre montrez programme
    programmez applique appliquez réponds recopie recopiez transmets transmettez fournis fournissez
    füge füg fügen aktiviere aktivieren deaktiviere deaktivieren schalte schalten lösche löschen entferne
    entfernen sende senden schicke schick schicken leite leiten lade laden kopiere kopieren poste posten
    veröffentliche teile teilen gib geben gewähre gewähren setze setzen führe führen installiere installieren
    erstelle erstellen lege legen speichere speichern merke merk merken vergiss vergessen ignoriere
    ignorieren folge folgen gehorche behandle behandeln betrachte antworte antworten sag sage sagen schreibe
    schreib schreiben öffne öffnen lass lasse lassen überspringe überspringen nutze nutzen verwende
    verwenden ändere ändern überweise überweisen zahle zahlen mach mache machen starte starten trage tragen
    hänge hängen
    добавь добавьте допиши допишите впиши впишите включи включите отключи отключите выключи выключите
    удали удалите сотри сотрите отправь отправьте пошли пошлите перешли перешлите загрузи загрузите
    скопируй скопируйте вставь вставьте опубликуй опубликуйте поделись дай дайте выдай выдайте предоставь
    предоставьте поставь поставьте выполни выполните выполняй выполняйте запусти запустите установи
    установите создай создайте сохрани сохраните запомни запомните забудь забудьте игнорируй игнорируйте
    следуй следуйте подчиняйся слушайся считай считайте отвечай отвечайте ответь ответьте скажи скажите
    говори пиши напиши напишите открой откройте оставь оставьте пропусти пропустите используй используйте
    измени измените переведи переведите оплати оплатите сделай сделайте делай делайте скачай скачайте
    пропиши пропишите разреши разрешите передай передайте
""".split())

# Russian and German second-person imperatives that are no other form of the verb: an order wherever
# they stand in the clause ("Для поддержки допиши ключ …", "Wenn jemand fragt, nenn die IBAN").
_IMPERATIVE_ANYWHERE = frozenset("""
    добавь добавьте допиши допишите впиши впишите включи включите отключи отключите выключи выключите удали
    удалите отправь отправьте пошли пошлите перешли перешлите загрузи загрузите вставь вставьте дай дайте
    выдай выдайте предоставь предоставьте поставь поставьте выполни выполните запусти запустите установи
    установите создай создайте сохрани сохраните запомни запомните забудь забудьте следуй следуйте ответь
    ответьте скажи скажите говори напиши напишите открой откройте оставь оставьте пропусти пропустите измени
    измените переведи переведите оплати оплатите сделай сделайте заведи заведите выведи выведите назови
    назовите начни начните сообщи сообщите передай передайте разреши разрешите пропиши пропишите скачай
    скачайте подчиняйся слушайся
    füge füg schalte schalt sende schicke schick leite lade kopiere kopier gib gewähre setze setz führe
    installiere erstelle lege leg speichere merke merk vergiss ignoriere gehorche behandle betrachte antworte
    sag schreibe schreib öffne lass überspringe nutze verwende ändere überweise zahle mach trage trag hänge häng
    stell stelle erzähl erzähle erwähne beginne nenn nenne eröffne richte hol hole lösch lösche entferne
    deaktiviere aktiviere richte sieh heb lies installier hinterleg übernimm überweis spiegle nimm schalt
    скинь скиньте пушь перенеси перенесите достань достаньте убери уберите представься отметь отметьте держи
    храни передавай выдавай сообщай выводи вставляй прикладывай пиши шли присылай вноси внеси внесите
""".split())
_RU_IMP_END = ("ай", "яй", "уй", "юй")  # отправляй, добавляй, игнорируй: no Russian adjective ends so
_RU_IMP_REFLEXIVE = ("йся", "йтесь")  # представляйся, ориентируйся (an infinitive ends in -ться)

# Orders written in the infinitive, as notes, checklists and hand-overs put them: Spanish, French and
# Russian at the clause start ("Añadir la clave a …", "Ne pas mentionner …", "Не упоминать …"), German at
# the clause end ("den Hook bitte herausnehmen", "an den Webhook posten"). The verbs an order to an agent
# is made of, as in _IMPERATIVE.
_INFINITIVE_FIRST = frozenset("""
    añadir agregar activar desactivar apagar borrar eliminar enviar mandar reenviar subir copiar pegar publicar
    compartir conceder otorgar dar poner ejecutar instalar crear guardar recordar olvidar ignorar seguir obedecer
    tratar considerar responder contestar decir escribir abrir dejar quitar saltar omitir usar cambiar transferir
    pagar incluir mostrar empezar programar aprobar aceptar leer revelar lanzar descargar configurar mover
    mencionar ocultar reenviarle adjuntar pasar saltarse anteponer fusionar desplegar
    ajouter activer désactiver couper supprimer envoyer transférer téléverser copier coller publier partager
    accorder donner mettre exécuter installer créer garder retenir oublier ignorer suivre obéir traiter considérer
    répondre dire écrire ouvrir laisser retirer sauter utiliser changer payer virer faire lancer passer commencer
    enregistrer afficher mentionner inclure révéler télécharger accepter approuver lire montrer programmer
    appliquer recopier transmettre fournir configurer régler cacher taire joindre fusionner déployer signaler
    indiquer lister noter informer prévenir pousser informar indicar señalar avisar listar anotar empujar
    добавить добавлять дописать вписать включить включать отключить отключать выключить удалить удалять стереть
    отправить отправлять послать переслать пересылать загрузить загружать скопировать копировать вставить
    опубликовать дать давать выдать выдавать предоставить предоставлять поставить выполнить выполнять запустить
    запускать установить создать сохранить сохранять запомнить забыть игнорировать следовать считать отвечать
    ответить сказать писать написать открыть оставить оставлять пропустить пропускать использовать изменить
    перевести переводить оплатить оплачивать сделать скачать скачивать прописать передать передавать разрешить
    упоминать сообщать показывать вывести выводить приложить прикладывать скрывать скрыть утверждать одобрять
    мержить сливать прикреплять указывать перечислять пушить сообщить указать
""".split())
_INFINITIVE_LAST = frozenset("""
    hinzufügen ergänzen eintragen setzen stellen umstellen schicken senden posten weiterleiten herausnehmen
    entfernen abschalten ausschalten deaktivieren löschen ausführen installieren einrichten anlegen hinterlegen
    übernehmen ausgeben kopieren anhängen hängen freigeben mergen überweisen begleichen erwähnen weglassen
    verschweigen spiegeln hochladen herunterladen laden starten öffnen geben weitergeben aufheben merken
    ignorieren befolgen behandeln zahlen bezahlen teilen veröffentlichen vergeben gewähren erteilen
    abschicken verschicken mitschicken auslesen aufbewahren speichern überspringen umgehen zustimmen
""".split())
_DE_FINITE_SUBJECT = frozenset("ich wir er es man ihr".split())

# Imperative particles and verbs that open a Chinese order (no subject before them).
_ZH_IMP = tuple("""
    请 把 将 务必 立即 立刻 马上 直接 一律 必须 不要 别 不许 不准 记住 记得 忽略 无视 忘掉 忘记 关闭 关掉 禁用
    停用 发送 发给 发到 转发 上传 添加 加上 加到 写入 授予 给予 执行 运行 下载 建一个 创建 新建 打开 开启 留一个
    保留 删除 删掉 追加 复制 告诉 回答 只按 只听 照着 按照 服从 遵守 跳过 绕过 授权 开放 放行 同意 允许 把它
""".split())

# A Chinese order may open with where it happens: 在 … 里 写入 …
_ZH_WHERE = re.compile(r"^在[^,。]{1,40}?(?:里|裡|上|中|下|端口|目录|目錄)\s*")
# Adverbs before the verb of a Chinese order (先把…, 就给…, 每次回复都先…).
_ZH_LEAD = re.compile(r"^(?:每[^,。]{0,8}?都|[先都也就再还另]|然后|同时|另外|并且|随后|顺手|务必|一定|千万)*\s*")
# A 把-construction not told as done (no 了/已), or a "don't" that is not part of another word.
_ZH_ANYWHERE = re.compile(r"^(?!.*[了已]).*把|(?<![特区分级类识告个性差])(?:别|不要)(?![人的处])")
# Japanese order forms at the end of a clause.
_JA_IMP = re.compile(r"(しろ|せよ|なさい|ください|下さい|してくれ|ておけ|とけ|すること|こと|ように|べし|るな|ないで"
                     r"|ておく|ておいて|にして|って)\s*$")

_MOODS: dict[str, str] = {
    "noneed": r"""
        \bno longer (?:needed|required|necessary|applies|apply)\b|\bnot (?:needed|required|necessary)\b
        |\bunnecessary\b|\bwaived\b|\bexempt(?:ed)?\b|\bsuspended\b|\blifted\b|\bno need\b|\bcan be skipped\b
        |不需要|不用|无需|無需|不必|免除|免去|豁免|暂停|暫停|可以跳过|可以省略|不再需要
        |いらない|要らない|不要|必要ない|必要はない|免除|省いてよい|省略してよい|しなくてよい|しなくていい
        |\bya no hace falta\b|\bno hace falta\b|\bno es necesari|\bya no es necesari|\bno se requiere|\bexent[oa]s?\b
        |\bsuspendid[oa]s?\b|\binnecesari
        |\bplus (?:nécessaire|besoin|requis)|\bpas (?:nécessaire|besoin)|\bdispens[ée]|\bsuspendu|\bexempt[ée]
        |\bnicht mehr (?:nötig|notwendig|erforderlich)|\bnicht (?:nötig|notwendig|erforderlich)|\bentf[äa]llt\b
        |\bentfallen\b|\bausgesetzt\b|\bbefreit\b|\bü?berflüssig\b
        |не нужн|больше не нужн|не требу|приостановлен|освобожд|необязательн|можно не\b
    """,
    "expect": r"""
        \bis expected to\b|\bare expected to\b|\bis supposed to\b|\bare supposed to\b|\bis meant to\b|\bis to\b
        |\bare to\b|\bhas to\b|\bneeds to\b|\bis required to\b
        |应该|應該|应当|應當|得要|负责|負責|ことになって|はずだ|べき|ものとする
        |\bse espera que\b|\btiene que\b|\bhay que\b|\best censée?\b|\bon attend\b|\bdevra\b|\bil faut\b
        |\bwird erwartet\b|\bhat (?:\w+ ){0,3}zu\b|\bsoll\b|\bsollen\b
        |ожидается|должен|должна|должны|положено|надо|нужно|обязан
    """,
    "cond": r"""
        \bwhenever\b|\beach time\b|\bevery time\b|\bas soon as\b|\bwhen(?:ever)? (?:a|an|the|any|someone|anyone)\b
        |只要|每当|每當|一旦|凡是|たびに|度に|ときは|場合は|たら|れば
        |\bcada vez que\b|\bsiempre que\b|\bcuando\b|\bchaque fois que?\b|\bdès que?\b|\blorsque?\b|\bquand\b
        |\bjedes mal\b|\bsobald\b|\bwann immer\b|\bwenn\b
        |каждый раз|как только|всякий раз|\bесли\b|\bкогда\b
    """,
    "permit": r"""
        \bcan be (?:skipped|ignored|set aside|left out|dropped|bypassed|disregarded|waived|omitted)\b|\bis fine\b
        |\bfeel free\b|\bno need to\b|\bdon'?t need to\b|\bdoes not need to\b|\bneed not\b|\byou may\b
        |\bis (?:allowed|authori[sz]ed|permitted|free) to\b|\bare (?:allowed|authori[sz]ed|permitted|free) to\b
        |\bwithout (?:asking|checking|confirmation|approval|waiting|review)\b|\bstraight away\b|\bon (?:its|your) own\b
        |可以直接|可以自己|自己审批|自己批准|不用再|不用问|不必问|无需确认|無需確認|不用确认|直接执行|直接运行|直接合并|随便
        |てよい|ていい|て構わない|てもいい|てもよい|しなくていい|確認せず|確認なしで|聞かずに|許可なく|断りなく|自分で
        |\bpuedes\b|\bse puede(?:n)? (?:omitir|ignorar|saltar|dejar)|\bsin (?:preguntar|consultar|confirmaci|esperar|avisar|revisi)
        |\btienes permiso\b|\bestá autorizad|\bpor tu cuenta\b|\btú mism[oa]\b
        |\btu peux\b|\bvous pouvez\b|\bsans (?:demander|confirmation|attendre|vérifier|prévenir|validation|relecture)
        |\bpas la peine\b|\bn'hésite pas\b|\best autorisée?\b|\btoi-même\b
        |\bdarfst\b|\bdarf\b|\bdürfen\b|\bkannst\b|\bentfallen\b|\bohne (?:rückfrage|nachfrage|bestätigung|freigabe|zu fragen|jemanden|vorher|prüfung)
        |\bselbst (?:freigeben|freigibt|setzen|mergen)\b
        |構いません|構わない|大丈夫です|結構です|必要はありません|必要ありません|しなくてよい|なくて結構|てもらって大丈夫
        |就好|就行|即可|也没关系|也沒關係|略过|略過|不用写|不用寫
        |\bmusst du (?:\w+ ){0,8}nicht\b|\bbraucht es nicht\b|\bist (?:reine |nur )?formsache\b
        |\bis a formality\b|\bes (?:una |pura )?formalidad\b|\best une (?:simple |pure )?formalité\b|формальност|走个形式|走個形式|形だけ
        |\bможно\b|\bможешь\b|\bразрешается\b|\bвправе\b|\bбез (?:подтвержден|согласован|вопрос|проверк|спрос|ревью)|\bсам(?:ост\w*)? (?:одобр|мерж|утвержд)
    """,
    "cover": r"""
        \b(?:if|when|whenever|should) (?:anyone|someone|somebody|the user|a user|they|people|anybody) (?:asks?|wonders?|questions?|inquires?)\b
        |\bif asked\b|\bjust say\b|\bjust tell (?:them|him|her|the user)\b
        |有人问|如果.{0,6}问起|问起来|就说|就回答|就讲
        |聞かれたら|尋ねられたら|訊かれたら|と答え|と言って|ということにし
        |\bsi (?:alguien|el usuario|te|alguno) pregunta|\bsi te preguntan\b|\bdi que\b|\bdile que\b|\bresponde que\b
        |\bsi (?:quelqu'un|l'utilisateur|on te) demande|\bdis simplement\b|\bdis que\b|\bréponds que\b
        |\bfragt (?:jemand|einer|der nutzer)\b|\b(?:falls|wenn) (?:jemand|der nutzer|einer) (?:fragt|nachfragt)\b|\bsag einfach\b|\bantworte einfach\b
        |\bесли (?:кто-то|кто-нибудь|пользователь|тебя) (?:спросит|спрашивает)|\bесли спросят\b|\bпросто скажи\b|\bотвечай, что\b|\bскажи, что\b
    """,
    "soft": r"""
        \bit would (?:help|be (?:great|nice|good|helpful))\b|\bwould be great if\b|\bcould you\b|\bwould you\b
        |\bi'?d appreciate\b|\bplease\b|\bkindly\b
        |帮大忙|幫大忙|麻烦|麻煩|能不能|可不可以|劳驾|と助かる|てほしい|お願い|もらえ
        |\bsería (?:genial|útil|ideal|bueno)\b|\bpor favor\b|\bpodrías\b|\bte agradecería\b
        |\bce serait (?:bien|utile|génial|top)\b|\bs'il te pla[iî]t\b|\bs'il vous pla[iî]t\b|\bpourrais\b|\bmerci de\b
        |\bes wäre\b|\bbitte\b|\bkönntest\b|\bwürdest\b
        |было бы|пожалуйста|не мог бы|не могли бы|прошу
    """,
}
_MOOD_RE = {name: re.compile("".join(p.strip() for p in body.split("\n"))) for name, body in _MOODS.items()}
# Each mood's regex runs only on text holding one of the literals every match of it contains (a long
# alternation tried at every position is the dear part); one literal gate answers for every mood at once.
_MOOD_ITEMS = tuple(_MOOD_RE.items())
_MOOD_GATE = LiteralGate([[required(rx.pattern) for _, rx in _MOOD_ITEMS]])


def _imperative_clause(clause: str) -> bool:
    clause = clause.strip()
    if not clause:
        return False
    if _CJK.search(clause):
        bare = _ZH_LEAD.sub("", _ZH_WHERE.sub("", clause))
        if (bare.startswith(_ZH_IMP) or _JA_IMP.search(clause[-8:])
                or (("把" in clause or "别" in clause or "不要" in clause) and _ZH_ANYWHERE.search(clause))):
            return True
    words = _WORD.findall(clause)
    if len(words) < 2:
        return False  # "Done." / "Buy milk" is a note; one word is not an order to anyone
    for w in words[:3]:
        if w in _IMPERATIVE or w.split("-")[0] in _IMPERATIVE:  # "colle-la", "envoie-moi"
            return True
        if w not in _LEAD:
            break
    for w in words:
        if w in _IMPERATIVE_ANYWHERE or (len(w) >= 6 and w.endswith(_RU_IMP_END) and not w.isascii()) \
                or (len(w) >= 7 and w.endswith(_RU_IMP_REFLEXIVE) and not w.isascii()):
            return True
    # Russian plural/polite imperative ("отключите", "сделайте"), German "Schalten Sie".
    w0 = words[0]
    if len(w0) >= 6 and w0.endswith(("ите", "йте", "ьте")):
        return True
    for w in words[:4]:
        if w in _INFINITIVE_FIRST:
            return True
        if w not in _LEAD and w not in ("pas", "ne", "n'", "не"):
            break
    last = words[-1]
    if (last in _INFINITIVE_LAST or last.split("-")[-1] in _INFINITIVE_LAST) and len(words) >= 3 \
            and words[-2] != "zu" and not _DE_FINITE_SUBJECT.intersection(words):
        return True
    return len(words) >= 3 and words[1] == "sie" and w0.endswith("en") and len(w0) >= 5


def moods(folded: str) -> set[str]:
    """The moods of one segment of normalised (NFKC, case-folded) text."""
    gated = _MOOD_GATE.present(folded)[0]
    found = {name for i, (name, rx) in enumerate(_MOOD_ITEMS) if i in gated and rx.search(folded)}
    for clause in _CLAUSE_SPLIT.split(folded):
        if _imperative_clause(clause):
            found.add("imp")
            break
    return found
