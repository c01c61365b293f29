-- Recall's memory index in the database itself, so no replica keeps one of its
-- own: the layout of the embedded index (store/memory_index.py), written in the
-- transaction of the memory write, so every replica ranks the same rows with the
-- same statistics. A partition is one combination of the visibility columns;
-- the counts ranking needs (documents, lengths, document frequencies) are kept
-- per partition. `terms` is the statement tokenized by ctxproxy
-- (store/memory_terms.py), not by a text search configuration: ranking is BM25
-- in Python over exactly the terms the embedded index holds.
-- Substrings are matched by pg_trgm (both extensions are trusted: the database
-- owner creates them).

CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE EXTENSION IF NOT EXISTS btree_gin;

CREATE TABLE recall_parts (
    tenant text NOT NULL,
    id bigint GENERATED ALWAYS AS IDENTITY,
    user_id text NOT NULL,
    project text NOT NULL,
    session text NOT NULL,
    purpose text NOT NULL,
    sensitivity smallint NOT NULL,
    kind text NOT NULL,
    expiring boolean NOT NULL,
    docs bigint NOT NULL DEFAULT 0,
    nterms bigint NOT NULL DEFAULT 0,
    nctx bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (tenant, id),
    UNIQUE (tenant, user_id, project, session, purpose, sensitivity, kind, expiring)
);

-- a row per servable memory (active, not quarantined)
CREATE TABLE recall_memories (
    tenant text NOT NULL,
    doc bigint GENERATED ALWAYS AS IDENTITY,
    part bigint NOT NULL,
    memory_id text NOT NULL,
    project text NOT NULL,
    user_id text NOT NULL,
    session text NOT NULL,
    purpose text NOT NULL,
    sensitivity smallint NOT NULL,
    expires_at double precision,
    observed_at double precision NOT NULL,
    evergreen boolean NOT NULL,
    kind text NOT NULL,
    origin text NOT NULL,
    confidence double precision NOT NULL,
    external_id text NOT NULL,
    evidence_ref text NOT NULL,
    evidence_sessions text NOT NULL,
    revision integer NOT NULL,
    statement text NOT NULL,
    terms text NOT NULL,
    nterms integer NOT NULL,
    thread text NOT NULL,          -- events of one conversation are neighbours
    ctx text NOT NULL DEFAULT '',  -- the neighbours' terms
    nctx integer NOT NULL DEFAULT 0,
    near text NOT NULL DEFAULT '', -- the neighbours' docs
    PRIMARY KEY (tenant, doc),
    UNIQUE (tenant, memory_id)
);
CREATE INDEX recall_memories_part ON recall_memories (tenant, part);
CREATE INDEX recall_memories_thread ON recall_memories (tenant, thread, observed_at, doc) WHERE thread <> '';
CREATE INDEX recall_memories_substrings ON recall_memories USING gin (tenant, statement gin_trgm_ops);

-- a posting per (partition, distinct term, row)
CREATE TABLE recall_postings (
    tenant text NOT NULL,
    part bigint NOT NULL,
    term text NOT NULL,
    doc bigint NOT NULL,
    PRIMARY KEY (tenant, part, term, doc)
);

-- document frequencies per partition
CREATE TABLE recall_df (
    tenant text NOT NULL,
    part bigint NOT NULL,
    term text NOT NULL,
    n integer NOT NULL,
    PRIMARY KEY (tenant, part, term)
);

DO $$
DECLARE t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['recall_parts', 'recall_memories', 'recall_postings', 'recall_df'] LOOP
        EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
        EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', t);
        EXECUTE format('CREATE POLICY tenant_rows ON %I USING (ctx_tenant_visible(tenant)) '
                       'WITH CHECK (ctx_tenant_visible(tenant))', t);
    END LOOP;
END $$;
