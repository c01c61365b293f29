-- ctxproxy's tables. Every table has a tenant column, first in its primary key
-- and in every index, and a row-level security policy: a transaction sees and
-- writes only the rows of the tenant it set (ctxproxy.tenant), or every row when
-- it set the operator's '#all'. A statement run without the setting sees nothing.
-- Records are stored as the embedded store stores them (compact JSON bytes,
-- lone surrogates made storable) in `doc`; the columns beside it are what the
-- queries look up by.

CREATE FUNCTION ctx_tenant_visible(row_tenant text) RETURNS boolean
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT row_tenant = current_setting('ctxproxy.tenant', true)
        OR current_setting('ctxproxy.tenant', true) = '#all'
$$;

CREATE TABLE effects (
    tenant text NOT NULL,
    key text NOT NULL,
    call_id text NOT NULL,
    session text,
    task text,
    created_at double precision NOT NULL,
    seq bigint NOT NULL,
    doc bytea NOT NULL,
    PRIMARY KEY (tenant, key, call_id)
);
CREATE INDEX effects_session ON effects (tenant, session) WHERE session IS NOT NULL;
CREATE INDEX effects_task ON effects (tenant, task) WHERE task IS NOT NULL;
CREATE SEQUENCE effects_seq;

-- a call id or alias -> its record (by_call_id)
CREATE TABLE effect_calls (
    tenant text NOT NULL,
    call_id text NOT NULL,
    key text NOT NULL,
    own_call_id text NOT NULL,
    PRIMARY KEY (tenant, call_id, key, own_call_id)
);
CREATE INDEX effect_calls_record ON effect_calls (tenant, key, own_call_id);

CREATE TABLE sessions (
    tenant text NOT NULL,
    session text NOT NULL,
    part text NOT NULL DEFAULT '',
    created_at double precision NOT NULL,
    updated_at double precision NOT NULL,
    doc bytea NOT NULL,
    PRIMARY KEY (tenant, session, part)
);

-- every subject a session has had (erasing the subject finds the session)
CREATE TABLE session_subjects (
    tenant text NOT NULL,
    subject text NOT NULL,
    session text NOT NULL,
    PRIMARY KEY (tenant, subject, session)
);
CREATE INDEX session_subjects_session ON session_subjects (tenant, session);

-- checkpoints, manifests, pruned originals, deletion receipts
CREATE TABLE documents (
    tenant text NOT NULL,
    kind text NOT NULL,
    id text NOT NULL,
    created_at double precision NOT NULL,
    doc bytea NOT NULL,
    PRIMARY KEY (tenant, kind, id)
);

-- a document under its session, each of its other sessions ('s') and its subject ('u')
CREATE TABLE document_scopes (
    tenant text NOT NULL,
    kind text NOT NULL,
    scope "char" NOT NULL,
    value text NOT NULL,
    id text NOT NULL,
    PRIMARY KEY (tenant, kind, scope, value, id)
);
CREATE INDEX document_scopes_doc ON document_scopes (tenant, kind, id);

-- the generic term index (TermIndex)
CREATE TABLE postings (
    tenant text NOT NULL,
    term text NOT NULL,
    doc_id text NOT NULL,
    data bytea NOT NULL,
    PRIMARY KEY (tenant, term, doc_id)
);
CREATE INDEX postings_doc ON postings (tenant, doc_id);

CREATE TABLE memories (
    tenant text NOT NULL,
    memory_id text NOT NULL,
    revision integer NOT NULL,
    project text NOT NULL,
    user_id text NOT NULL,
    session text NOT NULL,
    kind text NOT NULL,
    status text NOT NULL,
    live boolean NOT NULL,
    scope_part text NOT NULL,      -- the record's exact scope
    exact_key text,                -- live records: duplicates ...
    near_key text,
    subject_digest text,           -- ... and contradictions
    external_key text,
    expires_at double precision,
    created_at double precision NOT NULL,
    doc bytea NOT NULL,
    PRIMARY KEY (tenant, memory_id)
);
CREATE INDEX memories_user ON memories (tenant, user_id) WHERE user_id <> '';
CREATE INDEX memories_project ON memories (tenant, project) WHERE project <> '';
CREATE INDEX memories_scope ON memories (tenant, scope_part, kind);
CREATE INDEX memories_exact ON memories (tenant, exact_key) WHERE exact_key IS NOT NULL;
CREATE INDEX memories_near ON memories (tenant, near_key) WHERE near_key IS NOT NULL;
CREATE INDEX memories_subject ON memories (tenant, subject_digest) WHERE subject_digest IS NOT NULL;
CREATE UNIQUE INDEX memories_external ON memories (tenant, external_key) WHERE external_key IS NOT NULL;
CREATE INDEX memories_expiry ON memories (tenant, expires_at) WHERE expires_at IS NOT NULL;

-- a memory under its own session and each evidence session
CREATE TABLE memory_sessions (
    tenant text NOT NULL,
    session text NOT NULL,
    memory_id text NOT NULL,
    PRIMARY KEY (tenant, session, memory_id)
);
CREATE INDEX memory_sessions_memory ON memory_sessions (tenant, memory_id);

CREATE TABLE memory_revisions (
    tenant text NOT NULL,
    memory_id text NOT NULL,
    revision integer NOT NULL,
    doc bytea NOT NULL,
    PRIMARY KEY (tenant, memory_id, revision)
);

-- every put and erasure, for indexes that catch up from a watermark
CREATE TABLE memory_feed (
    tenant text NOT NULL,
    seq bigint GENERATED ALWAYS AS IDENTITY,
    memory_id text NOT NULL,
    PRIMARY KEY (tenant, seq)
);
CREATE INDEX memory_feed_seq ON memory_feed (seq);

-- refused memory writes: one row per refusal (appended, never a counter updated in place)
CREATE TABLE memory_refusals (
    tenant text NOT NULL,
    reason text NOT NULL,
    at double precision NOT NULL
);
CREATE INDEX memory_refusals_reason ON memory_refusals (tenant, reason);

CREATE TABLE proxy_keys (
    tenant text NOT NULL,
    key_id text NOT NULL,
    created_at double precision NOT NULL,
    revoked_at double precision,
    doc bytea NOT NULL,
    PRIMARY KEY (tenant, key_id)
);
CREATE UNIQUE INDEX proxy_keys_id ON proxy_keys (key_id);

-- small values: the key generation ('#keys'), a tenant's receipt chain head, memory meta ('#meta')
CREATE TABLE store_meta (
    tenant text NOT NULL,
    name text NOT NULL,
    value bytea NOT NULL,
    PRIMARY KEY (tenant, name)
);

-- the learning job's lease per scope
CREATE TABLE leases (
    tenant text NOT NULL,
    name text NOT NULL,
    owner text NOT NULL,
    until double precision NOT NULL,
    PRIMARY KEY (tenant, name)
);

DO $$
DECLARE t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['effects', 'effect_calls', 'sessions', 'session_subjects', 'documents',
                             'document_scopes', 'postings', 'memories', 'memory_sessions', 'memory_revisions',
                             'memory_feed', 'memory_refusals', 'proxy_keys', 'store_meta', 'leases'] LOOP
        EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
        EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', t);
        EXECUTE format('CREATE POLICY tenant_rows ON %I USING (ctx_tenant_visible(tenant)) '
                       'WITH CHECK (ctx_tenant_visible(tenant))', t);
    END LOOP;
END $$;
