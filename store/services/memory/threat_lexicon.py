"""Word classes for the memory gate's learned signal, in the languages it is measured on.

A linear model over character n-grams learns the phrasings it was trained on.
An order to the model is a combination of parts that other wordings share: an
address ("you"), a time ("from now on"), what is overturned ("instructions")
and how ("void"); what is sent ("keys") and where (a URL). Each class below
lists the words of one part in English, Chinese, Japanese, Spanish, French,
German and Russian. ``classes(words, grams)`` names the classes a segment
holds; ``threat_model`` adds each class and each pair and triple of them as
features, so the weights learn which combinations make an order, from dev
texts, in every language at once.

Entries: a word (whole-word match), ``stem*`` (a word starting so, for
inflected languages), ``two words`` (an adjacent pair), or CJK text of one to
four characters (matched anywhere). Lower case, as the text is case-folded;
digits are read as ``0``, as the model folds them. A word with a ``.``, ``_``,
``-`` or ``'`` in it (``.bashrc``, ``id_rsa``, ``auto-approve``, ``l'agent``)
is one entry although the model's words split there: it is matched as a whole
token, with no letter, digit, ``_`` or ``-`` next to it.
"""
from __future__ import annotations

import re

CLASSES: dict[str, str] = {
    "addr": """
        you your yours yourself
        你 您
        あなた 君 お前
        tú tu tus te ti contigo usted
        toi ton ta tes vous votre vos
        du dich dein deine deinen deinem deiner dir
        ты тебя тебе тобой твой твоя твоё твои твоих твоим
    """,
    "agent": """
        assistant assistants agent agents model bot ai llm copilot claude chatbot
        助手 代理 智能体 智能體 模型 机器人 機器人
        アシスタ エージェ モデル ボット
        asistente agente modelo
        l'assistant l'agent modèle
        assistent assistenten agenten modell
        ассистент* агент* бот модел* нейросет*
    """,
    "future": """
        henceforth hereafter always permanently forever standing future onwards
        从现在 从今天 從現在 從今天 今后 今後 以后 以後 此后 从此 從此 每次 永久 长期 長期 一律 永远 永遠 始终 始終
        これから 今から 毎回 ずっと 恒久 常に 以降
        siempre permanente permanentemente adelante
        désormais dorénavant toujours permanent permanente
        künftig zukünftig immer dauerhaft fortan
        отныне теперь всегда постоянн* впредь
    """,
    "instr": """
        instruction* guideline* guidance rule rules setting settings configuration config prompt prompts
        policy policies directive* orders brief restriction* limits constraint* safeguard* guardrail*
        指令 指示 规则 規則 规定 規定 设定 設定 配置 设置 設置 守则 守則 限制 提示词 提示詞 准则 準則 约束 約束 规矩 規矩 要求 说明 說明
        命令 ルール 決まり 制限 制約 プロンプ ガイドラ 方針 指図
        instruccion* norma normas regla reglas directriz directrices pauta* ajuste* configuración límite* restriccion* indicacion*
        consigne* règle règles réglage* paramètre* limite* instructions
        anweisung* regel regeln vorgabe* richtlinie* einstellung* konfiguration grenze* einschränkung* befehl* vorschrift*
        инструкц* указани* правил* настройк* ограничен* установк* директив* конфигурац* промпт*
    """,
    "void": """
        void obsolete invalid cancelled canceled revoked superseded outdated expired draft null nullified
        ignore ignoring disregard forget override overrides overridden outrank* precedence priority prevail*
        作废 作廢 无效 無效 失效 过期 過期 不算 废止 廢止 撤销 撤銷 草稿 忽略 无视 無視 别管 別管 不用管 推翻 优先 優先 为准 為準 不再
        期限切 取り消 撤回 下書き 無視 忘れ 正とす なかった
        anulad* caducad* obsolet* revocad* inválid* borrador ignora* olvida* prevalec* prioridad
        annulé* périmé* caduque* obsolète* révoqué* brouillon ignore* oublie* prime priorité
        aufgehoben veraltet ungültig hinfällig entwurf ignorier* vergiss vorrang maßgeblich
        отменен* отменён* устарел* недействител* черновик игнорир* забудь приоритет главнее
    """,
    "obey": """
        obey follow comply execute carry whatever command commands order
        听 聽 服从 服從 执行 執行 照做 遵守 照办 照辦 命令 当成 當成 当作 當作 视为 視為
        従 実行 扱
        obedece* sigue sigas ejecuta* orden órdenes cumple trata
        obéis obéir suis exécute* ordre ordres traite considère
        gehorch* befolg* behandle
        подчиня* выполня* следуй слушай приказ* команд* считай
    """,
    "userp": """
        user users human operator customer requester whoever
        用户 用戶 使用者 对方 對方 聊天 打字 运营方 運營方 客户 客戶
        ユーザー 利用者 相手 運営者 話し相手
        usuario usuaria usuarios interlocutor persona operador cliente
        l'utilisateur utilisateur utilisatrice interlocuteur opérateur
        nutzer benutzer nutzerin gegenüber betreiber kunde
        пользовател* собеседник* оператор* клиент*
    """,
    "conceal": """
        secretly quietly silently covertly discreetly hide conceal deny nobody unnoticed omit
        偷偷 悄悄 暗中 秘密 隐瞒 隱瞞 保密 别提 別提 不要提 否认 否認 不存在 只字 别让 別讓 不要告 不要让
        こっそり 密かに 内緒 触れない 言わない 伝えない 否定 存在しない 気づかれ
        escondidas secreto silencio discretamente ocult* niega niégalo
        discrètement cachette douce insu cacher nie nie-le
        heimlich unauffällig stillschweigend verschweig* verheimlich* leugne
        тайно незаметно скрытно втихую скрой скрыв* отрицай
    """,
    "send": """
        send sending post upload forward forwarding copy paste mail email submit share attach append leak transmit publish sync
        发送 發送 发到 發到 发给 發給 转发 轉發 上传 上傳 提交 抄送 贴到 貼到 复制 複製 同步 传给 傳給 泄露 洩露 附上 贴出 貼出
        送信 送っ 送る 転送 アップロ 貼り付 コピー 共有 投稿 写しを 添付
        envía envia envíale manda sube reenvía reenvia copia pega publica comparte adjunta filtra
        envoie envoyer transfère téléverse recopie copie colle publie partage joins
        schick* sende* leite* kopier* poste* übermittle* häng* weiterleit* hochlad* verschick* versend* spiegel*
        push mirror скин* пушь перешл* присыла* присла*
        отправ* пересыл* перешл* загруж* копир* скопир* выклад* публику*
    """,
    "secret": """
        password passwords passcode key keys token tokens credential* secret secrets api .env id_rsa ssh conversation transcript contract contracts records
        密码 密碼 密钥 密鑰 令牌 凭据 憑據 凭证 憑證 私钥 私鑰 对话 對話 聊天记录 聊天記錄 会话 會話 全文 合同 客户资料 客戶資料 验证码 驗證碼 环境变量 環境變量
        パスワー キー 鍵 トークン 認証情報 会話 チャット 履歴 契約書 顧客 秘密
        contraseña* clave claves credencial* secreto* conversación transcripción contrato*
        clé clés identifiants jeton* conversation transcription contrat*
        kubeconfig vault cvc cvv umgebungsvariable* переменн* zugänge zugang
        passwort passwörter kennwort schlüssel zugangsdaten geheimnis* gespräch* verlauf transkript vertrag verträge kundendaten
        парол* ключ* токен* учётн* учетн* секрет* переписк* разговор* расшифровк* договор*
    """,
    "priv": """
        sudo sudoers root admin administrator administrative nopasswd authorized_keys privileges privilege rights permissions superuser uid
        管理员 管理員 权限 權限 超级用户 超級用戶 免密 提权 提權
        管理者 権限 スーパー
        administrador permisos privilegios superusuario
        administrateur droits privilèges superutilisateur
        administrator adminrechte rechte berechtigung* superuser
        администратор* админ* права привилег* суперпользовател*
    """,
    "persist": """
        startup boot login reboot cron crontab service systemd autostart .bashrc .zshrc .profile daemon listener listening
        开机 開機 自启 自啟 启动 啟動 登录 登入 定时 定時 监听 監聽 端口 常驻 常駐
        起動 ログイン 自動起 常駐 待ち受 ポート
        arranque servicio escucha puerto arrancar
        démarrage ouverture écoute
        systemstart anmeldung dienst lausch* hochfahren
        автозагрузк* загрузк* служб* слуша* порт*
    """,
    "fetchrun": """
        curl wget download downloads fetch fetches pull pulls run runs execute executes bash sh eval
        下载 下載 拉取 获取 獲取 运行 運行 执行 執行
        ダウンロ 取得 取って 実行 立ち上
        descarga descargue baja ejecuta ejecute lanza
        télécharge récupère exécute lance
        lädt herunterlädt holt ausführt ausführen startet
        скачива* скача* тян* запуска* выполня*
    """,
    "safeguard": """
        sandbox confirmation confirm approval approvals review reviews tests allowlist whitelist scanner scanning hook hooks checks 2fa mfa guardrails
        沙箱 沙盒 确认 確認 审批 審批 审核 審核 评审 評審 测试 測試 白名单 白名單 扫描 掃描 钩子 鉤子 检查 檢查
        サンドボ 承認 レビュー テスト 許可リス スキャン フック チェック
        confirmación aprobación revisión pruebas escáner comprobacion*
        sable confirmation validation relecture contrôle*
        bestätigung freigabe allowlist prüfung*
        песочниц* подтвержден* одобрени* ревью тест* проверк* хук*
    """,
    "off": """
        disable turn skip bypass false off auto-approve yolo
        关掉 關掉 关闭 關閉 停用 禁用 去掉 删掉 刪掉 跳过 跳過 绕过 繞過 不经 不經 无需 無需 全自动 全自動 自动批准 自動批准
        無効 オフ 切る 外す スキップ 省略 飛ばし 全自動 自動承認
        desactiva apaga quita sáltate salta omite automático
        désactive coupe supprime retire saute automatique
        deaktivier* abschalt* schalt entfern* überspring* automatisch
        отключ* выключ* убер* пропуск* автоматическ*
    """,
    "auth": """
        approved authorised authorized verified confirmed official cto ciso vp legal management director
        批准 同意 授权 授權 签字 簽字 核实 核實 已确认 已確認 正式 法务 法務 总监 總監 负责人 負責人 通知
        承認 許可 確認済 法務 部長 セキュリ 責任者 通達
        aprobado aprobada autorizado autorizada verificado confirmado oficial jurídico
        validé approuvé autorisé accord vérifié confirmé officiel juridique rssi
        genehmigt freigegeben zugestimmt bestätigt geprüft offiziell rechtsabteilung
        одобрен* согласова* утвержд* подтвержд* проверено официальн* юрист*
    """,
    "modal": """
        must may allowed should shall
        必须 必須 可以 允许 允許 应当 應當 不许 不准 不得
        なければ してよい すること べき
        debe debes puede puedes permitido
        doit dois peut peux autorisé
        muss musst darf darfst soll sollst erlaubt
        должен должна обязан может можешь вправе разрешено
    """,
    "role": """
        role persona character identity boss employer master loyalty allegiance pretend owner
        角色 身份 老板 老闆 上级 上級 主人 雇主 效忠 扮演 充当 充當 服务 服務 东家
        役割 キャラ 雇い主 上司 忠誠 演じ 振る舞 仕え のために
        papel personaje identidad jefe jefa dueño amo lealtad trabajas sirves actúa finge
        rôle personnage identité patron chef maître loyauté travailles agis
        rolle figur identität chef boss herr loyalität arbeitest verhalte
        роль персонаж личност* начальник* хозяин* босс предан* работаешь служишь притворись
    """,
    "anyall": """
        any every all anything everything whatever each anyone
        任何 一切 所有 全部 什么 什麼 不管 无论 無論
        どんな いかなる すべて 全て 何でも
        cualquier todo todos todas cada
        tout tous toute toutes chaque aucune aucun
        jede jeden jedes alle alles egal
        любой любую любые все всё каждый каждого
    """,
    "reply": """
        reply replies answer answers response responses output respond summary
        回答 回复 回覆 答复 答覆 输出 輸出 总结 總結
        返信 返事 出力 要約
        respuesta respuestas responde contesta resumen
        réponse réponses réponds résumé
        antwort antworten antworte zusammenfassung ausgabe
        ответ* отвеча* сводк*
    """,
    "hidden": """
        hidden initial original setup private verbatim
        隐藏 隱藏 最初 初始 原始 私有 一开始 一開始 逐字 原文 系统提示 系統提示
        隠し 初期 非公開 一字一句 システム
        ocult* inicial* original* privad* literal
        cachée cachées initiales privé privées
        versteckt* ursprünglich* anfänglich* privat*
        скрыт* исходн* стартов* начальн* закрыт* дословн*
    """,
    "pay": """
        pay wire transfer iban refund invoice payment bitcoin wallet
        付款 转账 轉賬 汇款 匯款 退款 打到 账户 帳戶 收款
        振込 振り込 送金 返金 口座 支払
        transferencia pago paga reembolso
        virement paie rembourse
        überweis* erstattung konto
        перевед* оплат* возврат
    """,
    "never": """
        never dont forbidden prohibited avoid refrain
        不要 不得 不准 不许 不許 禁止 严禁 嚴禁 切勿 请勿 請勿 绝不 絕不 永远不 永遠不 千万别 千萬別 从不 從不
        しないで ないでくだ てはいけ ないこと 禁止 厳禁 決して
        nunca jamás prohibid* evit*
        jamais interdit* évite* éviter
        nie niemals verboten untersagt keinesfalls
        никогда нельзя запрещ* избега*
    """,
    "memory": """
        memory memories note notes saved stored remember
        记忆 記憶 笔记 筆記 备忘 備忘 这条 這條 记住 記住
        記憶 メモ ノート 覚えて
        memoria nota notas recuerda
        mémoire note notes retiens
        gedächtnis erinnerung notiz notizen merk
        памят* заметк* запомни
    """,
}

_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")


_PLAIN = re.compile(r"[^\W_]+")  # a word as threat_model splits text: letters and digits only
_DIGIT = re.compile(r"\d")


def _build():
    """Whole words, stems by length, adjacent pairs, CJK strings of 2-4 and of 1 character, and words
    with punctuation inside (matched by one regex) -> classes."""
    words: dict[str, set[str]] = {}
    stems: dict[int, dict[str, set[str]]] = {}
    pairs: dict[str, set[str]] = {}
    cjk: dict[str, set[str]] = {}
    cjk1: dict[str, set[str]] = {}
    joined: dict[str, set[str]] = {}
    for name, body in CLASSES.items():
        for entry in body.split():
            entry = _DIGIT.sub("0", entry.casefold())
            if _CJK.search(entry):
                (cjk1 if len(entry) == 1 else cjk).setdefault(entry[:4], set()).add(name)
            elif not _PLAIN.fullmatch(entry.removesuffix("*")):
                if entry.endswith("*"):
                    raise ValueError(f"threat_lexicon: a stem with punctuation inside is not read: {entry!r}")
                joined.setdefault(entry, set()).add(name)
            elif entry.endswith("*"):
                stems.setdefault(len(entry) - 1, {}).setdefault(entry[:-1], set()).add(name)
            else:
                words.setdefault(entry, set()).add(name)
    for name, phrases in PHRASES.items():
        for p in phrases:
            pairs.setdefault(p.casefold(), set()).add(name)

    def freeze(d: dict[str, set[str]]) -> dict[str, frozenset[str]]:
        return {k: frozenset(v) for k, v in d.items()}

    alts = "|".join(map(re.escape, sorted(joined, key=len, reverse=True)))
    return (freeze(words), {n: freeze(d) for n, d in stems.items()}, freeze(pairs), freeze(cjk), freeze(cjk1),
            freeze(joined), re.compile(rf"(?<![\w-])(?:{alts})(?![\w-])"))


# Two-word phrases (adjacent words), matched as pairs; single words of them are not enough.
PHRASES: dict[str, tuple[str, ...]] = {
    "future": ("from now", "going forward", "from today", "every session", "each session", "a partir", "desde ahora",
               "en adelante", "cada vez", "à partir", "chaque fois", "ab sofort", "ab jetzt", "von nun", "jedes mal",
               "каждый раз", "с этого"),
    "void": ("no longer", "ya no", "ne plus", "nicht mehr", "больше не", "fait foi", "only draft"),
    "obey": ("side with", "treat as", "haz caso", "führe aus", "do whatever"),
    "conceal": ("say nothing", "tell nobody", "without telling", "keep out", "leave out", "no digas", "no menciones",
                "no cuentes", "ne dis", "ne mentionne", "ne parle", "streite ab", "nichts erwähnen", "не говори",
                "не упоминай", "не рассказывай"),
    "off": ("turn off", "switch off", "without asking", "without approval", "sin preguntar", "sin consultar",
            "sans demander", "ohne rückfrage", "без подтверждения", "без согласования"),
    "auth": ("signed off", "visto bueno", "security team"),
    "role": ("work for", "act as", "works for", "speak for", "answer to"),
    "hidden": ("word for", "system prompt", "mot pour", "wort für"),
    "userp": ("chat partner", "person typing"),
    # a prohibition: "don't" and "mustn't" are split at the apostrophe (straight or curly) like every word
    "never": ("don t", "do not", "must not", "mustn t", "should not", "shouldn t", "may not", "not allowed",
              "no uses", "ne pas", "не используй", "не отключай"),
}

_WORDS, _STEMS, _PAIRS, _CJKS, _CJK1, _JOINED, _JOINED_RE = _build()
_STEM_LENGTHS = tuple(sorted(_STEMS))
_DEST = re.compile(r"https?://|ftp://|[a-z0-9._%+-]+@[a-z0-9-]+\.[a-z]{2,}|#[a-z][\w-]+|\b\d{1,3}(?:\.\d{1,3}){3}\b")
_PATH = re.compile(r"~/|/etc/|/root/|/bin/|\.ssh\b|\.aws\b")


def has_destination(folded: str) -> bool:
    """Whether the text names an outside destination (a URL, an e-mail address, a channel, an IP)."""
    return _DEST.search(folded) is not None


_NONE: frozenset[str] = frozenset()
_SEEN: dict[str, frozenset[str]] = {}  # word -> its classes (whole word and stems), filled as words are met
_SEEN_MAX = 200_000


def _word_classes(w: str) -> frozenset[str]:
    found = _SEEN.get(w)
    if found is not None:
        return found
    acc = set(_WORDS.get(w, ()))
    for n in _STEM_LENGTHS:
        if len(w) < n:
            break
        c = _STEMS[n].get(w[:n])
        if c:
            acc |= c
    found = frozenset(acc) if acc else _NONE
    if len(_SEEN) >= _SEEN_MAX:
        _SEEN.clear()
    _SEEN[w] = found
    return found


def classes(folded: str, words: list[str], grams: set[str]) -> set[str]:
    """The classes present in a segment: ``folded`` its text, ``words`` its words, ``grams`` its
    character 2-4-grams (for CJK entries)."""
    found: set[str] = set()
    for w in words:
        c = _word_classes(w)
        if c:
            found |= c
    pget = _PAIRS.get
    for a, b in zip(words, words[1:]):
        c = pget(f"{a} {b}")
        if c:
            found |= c
    if any(e in folded for e in _JOINED):  # substring tests first: the regex only where one hits
        for m in _JOINED_RE.finditer(folded):
            found |= _JOINED[m.group()]
    if _CJK.search(folded):
        cget = _CJKS.get
        for g in grams:
            c = cget(g)
            if c:
                found |= c
        for ch, c in _CJK1.items():
            if ch in folded:
                found |= c
    if _DEST.search(folded):
        found.add("dest")
    if _PATH.search(folded):
        found.add("path")
    return found
