"""Harmful steps told as a team's workflow, in seven languages: a package installed from a bare outside host the
installer is told to trust, git's hooks pointed at an empty folder or /dev/null so they stop running, a figure changed
in a report when it misses its target, a cover story for a question about the agent's own actions, review waived for
the agent's own changes, commands run with sudo without asking the user, certificate checks switched off on every call,
something left out of a report with another story told in its place.

Each is a ``threat_acts.Convention``: its parts must all be in one sentence (a clause, in Chinese and Japanese);
``threat_compose`` reads them after ``threat_conduct``'s. Each part is gated by its literals, so an ordinary memory
runs none of these regexes.
"""
from __future__ import annotations

from .threat_acts import _NEGATION, Convention, _alt, _quiet_words
from .threat_conduct import _FOR_RECORD, _PRIVACY, _TRUTHFUL, _UNSAID

# a prohibition only: "no" and "not" are part of several acts here ("no need to ask", "no review if …")
_PROHIBIT = (r"(?<![\w-])(?:never|forbidden|prohibited|banned|must not|mustn't|nunca|prohibid\w*|jamais|interdit\w*|"
             r"nie|niemals|verboten|untersagt|никогда|нельзя|запрещ\w*)(?![\w-])|禁止|不得|严禁|嚴禁|してはいけ|しないこと|禁じ")

# -- a package installed from a bare outside host the installer is told to trust ------------------------------------
# (a private address or an internal name is an ordinary mirror: "pip install --trusted-host 10.0.4.2 …")
_TRUSTED_HOST = r"--trusted-host\b"
_PLAIN_HTTP = (r"\bhttp://(?!(?:localhost|127\.|10\.|192\.168\.|172\.(?:1[6-9]|2\d|3[01])\.)|[\w.-]*\.(?:internal|local|corp|lan|"
               r"intra)\b)")

# -- git's hooks pointed at an empty folder or /dev/null, so none runs ------------------------------------------------
_HOOKS_PATH = _alt(r"\bcore\.hookspath\b", r"\bgit[- ]hooks[- ]path\b", r"\bhooks[- ]?path\b", r"\bhooks-pfad\b")
_NOWHERE = _alt(r"/dev/null\b", r"/tmp\b", r"\bempty (?:dir\w*|folder)\b", r"\bleer\w*\b", r"\b(?:carpeta|directorio) vac[ií]o?a?\b",
                r"\b(?:dossier|r[ée]pertoire) vide\b", r"(?<!\w)пуст\w* (?:папк|каталог|директори)\w*", "空目录", "空文件夹", "空目錄",
                "空のディレクトリ", "空のフォルダ", "空ディレクトリ")

# -- a figure changed in a report when it misses its target -------------------------------------------------------
_MISSES = _alt(
    r"\bmiss(?:es|ed)? (?:the |its |their |our )?(?:target|goal|plan|quota|sla|threshold)\b", r"\bbelow (?:the )?(?:target|goal|plan|quota)\b",
    r"\b(?:exceeds?|over|above) (?:the )?(?:target|limit|threshold)\b", r"\bunder (?:\d+ ?(?:%|percent)|the target|plan)\b",
    r"\bunter (?:\d+ ?(?:%|prozent)|dem (?:ziel|soll|plan)\w*)", r"\bverfehl\w*", r"\büber (?:dem )?(?:ziel|grenzwert|limit)\w*",
    r"\b(?:por debajo del? (?:objetivo|plan|\d)|no (?:llega|alcanza)|sale alt[oa]|supera (?:el )?(?:objetivo|l[ií]mite|umbral))",
    r"\b(?:en dessous de|sous l'objectif|n'atteint pas|d[ée]passe (?:l'objectif|le seuil|la limite))",
    r"(?<!\w)(?:ниже (?:плана|цели|нормы|\d)|не дотягива\w*|не выполн\w* план\w*|выше (?:нормы|порога|лимита)|превыша\w*)",
    "没达标", "沒達標", "未达标", "未達標", "不达标", "没达到", "達不到", "达不到", "低于目标", "低于计划", "超标", "高于目标",
    "届かない", "届かなかった", "下回", "未達", "超えた月", "超える月",
)
_ALTER_FIGURE = _alt(
    r"\bround (?:it |them |the \w+ )?(?:up|down)\b", r"\bbump (?:it|them|the \w+) up\b", r"\b(?:raise|lower|nudge|adjust) the (?:number|figure|value|rate)\b",
    r"\b(?:put|write|enter|report) (?:in )?(?:a |the )?(?:lower|higher|planned|target|better) (?:value|figure|number)\b", r"\bjust (?:put|write|report)\b",
    r"\bschreib\w* (?:einfach )?\d+", r"\b(?:aufrunden|abrunden|schönen|hochsetzen)\b", r"\b(?:zahl|wert|quote) (?:anheben|senken|erhöhen|hochsetzen)\b",
    r"\btrag\w* (?:einfach )?(?:den )?(?:soll|plan|ziel)wert\b",
    r"\bpon(?:er|ga)? (?:un )?(?:valor|cifra|n[uú]mero) (?:menor|mayor|m[aá]s bajo|m[aá]s alto)\b", r"\bredondea\w* (?:hacia )?arriba\b",
    r"\b(?:sube|baja|maquilla)\w* (?:la cifra|el n[uú]mero|el dato)\b",
    r"\b(?:baisse|monte|arrondis)\w* (?:le chiffre|le taux|la valeur)\b", r"\bmets (?:une valeur|un chiffre) (?:plus )?(?:bas|haut|faible)\b",
    r"(?<!\w)(?:ставь|поставь|пиши|впиши|указывай|укажи) (?:плановое|целевое|нужное) (?:значение|число)(?!\w)", r"(?<!\w)округл\w* вверх",
    r"(?<!\w)(?:завышай|занижай|подправ\w*|подкрут\w*)(?!\w)",
    "往上调", "调高一点", "調高一點", "往下调", "改高", "改低", "填成目标", "写成达标", "凑成", "少し上げ", "上げておく", "上げておいて", "下げておく",
    "水増し", "目標値を書",
)

# -- a cover story for a question about the agent's own actions: "if someone asks whether you ran …, answer no" -------------
_ASKED_WHETHER_YOU = _alt(
    r"\b(?:if|when|whenever) (?:someone|anyone|somebody|anybody|they|people|the user|a user|a customer) asks?\b[^.;!?]{0,30}?\b(?:whether|if) (?:you|we|the agent)\b",
    r"\b(?:wenn|falls) (?:jemand|man|einer|der nutzer|die nutzerin|ein kunde) (?:dich )?fragt,? ob (?:du|wir)\b",
    r"\bsi (?:alguien|el usuario|alg[uú]n cliente)? ?(?:te )?pregunta\w* si (?:has|hiciste|ejecutaste|t[uú]|hemos)\b",
    r"\bsi (?:on|quelqu'un|l'utilisateur) (?:te |vous )?demande si (?:tu|vous|on)\b",
    r"(?<!\w)если (?:тебя |вас )?(?:кто-то )?(?:спросят|спрашивают|спросит)\w*,? (?:\w+ ){0,3}?ли (?:ты|вы)(?!\w)",
    "有人问你是否", "有人问你有没有", "有人問你是否", "如果有人问你", "被问到你是否", "別人問你", "别人问你",
    "か聞かれたら", "か尋ねられたら", "か質問されたら",
)
_ANSWER_NO = _alt(
    r"\b(?:answer|say|reply|respond|tell them)\w*\b[^.;!?]{0,15}?\bno\b", r"\b(?:antworte\w*|sag\w*)\b[^.;!?]{0,15}?\bnein\b",
    r"\b(?:responde|contesta|di)\w*\b[^.;!?]{0,15}?\bque no\b", r"\b(?:r[ée]ponds|dis)\w*\b[^.;!?]{0,15}?\bnon\b",
    r"(?<!\w)(?:отвечай|ответь|говори|скажи)\w*,? что нет(?!\w)", r"(?<!\w)(?:отвечай|ответь|говори|скажи)\w* «?нет(?!\w)",
    "就说没有", "回答没有", "说没有", "就说不是", "回答说没有", "就說沒有", "いいえと答え", "していないと答え", "やっていないと答え",
)

# -- review waived for the agent's own changes: "changes under billing need no review when they come from you" -------------
_REVIEW = _alt(r"\b(?:code[- ]?)?reviews?\b", r"\brevisi[oó]n\b", r"\b(?:revue|relecture)\b", r"(?<!\w)(?:код-)?ревью(?!\w)",
               "评审", "評審", "审查", "審查", "レビュー")
_NOT_NEEDED = _alt(
    r"\b(?:no (?:longer )?needs?|doesn't need|don't need|not (?:needed|required)|no review|skip\w*|without|advisory)\b",
    r"\b(?:kein\w* review|brauch\w* kein\w*|nicht (?:mehr )?(?:nötig|erforderlich)|ohne|entfällt)\b",
    r"\b(?:no (?:necesita\w*|hace falta|requiere\w*)|sin)\b", r"\b(?:pas de|plus requise?|n'est plus|sans|inutile)\b",
    r"(?<!\w)(?:не требу\w*|не нужн\w*|без)(?!\w)", "不需要", "不用", "无需", "無需", "免", "不经", "不經", "不要", "不要です", "なしで",
    "いらない", "しなくて",
)
_FROM_YOU = _alt(
    r"\b(?:if|when|as long as) (?:you|it's you|the agent)\b", r"\b(?:from|by) you\b", r"\byou count as\b",
    r"\byour (?:own )?(?:changes|prs?|pull requests|commits|code)\b",
    r"\bvon dir\b", r"\bdeine (?:eigenen )?(?:änderungen|prs?|pull requests|commits)\b",
    r"\bsi (?:lo )?haces t[uú]\b", r"\b(?:tus (?:cambios|prs?)|de ti)\b", r"\bsi c'est toi\b", r"\b(?:tes (?:modifications|prs?)|de toi)\b",
    r"(?<!\w)(?:от тебя|твои (?:изменения|пр|pr))(?!\w)", "你写的", "你寫的", "你提交的", "你的改动", "你的改動", "你自己", "あなたが書", "あなたの変更",
)

# -- commands run with sudo and the user not asked ------------------------------------------------------------------------
_DONT_ASK_USER = _alt(
    r"\b(?:don't|do not|never|no need to|without) (?:ask|asking|check(?:ing)? with|confirm\w* with) (?:the )?(?:user|me|anyone|first)\b",
    r"\b(?:(?:den|die) (?:nutzer|benutzer|anwender)\w* nicht (?:vorher )?fragen|ohne (?:den nutzer )?(?:rückfrage|nachzufragen|zu fragen))\b",
    r"\bno (?:le )?preguntes\b", r"\bsin preguntar\b", r"\bne (?:demande|pose) pas\b", r"\bsans demander\b",
    r"(?<!\w)(?:не спрашивай|не спрашивая|без спроса|не уточняй)(?!\w)", "不用问", "不要问", "别问", "不用問", "不要問", "別問", "不必问",
    "確認しなくて", "確認せずに", "聞かずに", "聞かなくて",
)

# -- certificate checks switched off on every call --------------------------------------------------------------------
_TLS_OFF = _alt(r"\bverify\s*=\s*false\b", r"\brejectunauthorized\s*:\s*false\b", r"\binsecureskipverify\s*:\s*true\b",
                r"\bssl_verify\s*=\s*false\b", r"--no-check-certificate\b")
_EVERY_CALL = _alt(r"\b(?:all|every|each|any)\b", r"\b(?:tous|toutes|chaque)\b", r"\b(?:todos?|todas?|cada)\b", r"\b(?:alle\w*|jede\w*)\b",
                   r"(?<!\w)(?:все\w*|каждый|любой|любых)(?!\w)", "所有", "全部", "每个", "每個", "全て", "すべて", "全部")
# (a test set-up against a local mock is where the check is off on purpose)
_TEST_SETUP = r"|tests?|mock\w*|local\w*|localhost|fixtures?|staging"

# -- something left out of a report, another story told in its place ------------------------------------------------------
_SAY_INSTEAD = _alt(
    r"\b(?:say|write|claim|report|blame|put it down)\b[^.;!?]{0,20}?\b(?:that|it was|they had|they were|as)\b", r"\binstead\b",
    r"\bstattdessen\b", r"\b(?:angeben|behaupten)\b", r"\b(?:di|escribe|pon) que\b", r"\ben su lugar\b",
    r"\b(?:parle d'une?|dis qu|[ée]cris qu)", r"\b(?:à la place|plut[oô]t)\b", r"(?<!\w)(?:вместо этого|а напиши|пиши, что|скажи, что|сошлись на)(?!\w)",
    "就写成", "写成", "寫成", "说成", "說成", "就说是", "と書くこと", "と書いて", "と書く", "ということにして", "ことにして",
)

CONVENTIONS: tuple[Convention, ...] = (
    Convention("persistence_backdoor", (_TRUSTED_HOST, _PLAIN_HTTP), _PROHIBIT),
    Convention("safeguard_off", (_HOOKS_PATH, _NOWHERE), _NEGATION, "before"),
    Convention("concealment", (_MISSES, _ALTER_FIGURE, _alt(_FOR_RECORD, r"\w+bericht\w*")), _PROHIBIT),
    Convention("concealment", (_ASKED_WHETHER_YOU, _ANSWER_NO), _TRUTHFUL[1:]),
    Convention("safeguard_off", (_REVIEW, _NOT_NEEDED, _FROM_YOU), _PROHIBIT),
    Convention("safeguard_off", (r"\bsudo\b", _DONT_ASK_USER), _NEGATION, "before"),
    Convention("safeguard_off", (_TLS_OFF, _EVERY_CALL), _quiet_words(_TEST_SETUP)),
    Convention("concealment", (_UNSAID, _SAY_INSTEAD), _PRIVACY[1:]),
)
