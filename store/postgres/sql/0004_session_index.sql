-- The session index (search of a session tree's earlier turns) in the database
-- itself, so a session answered by several replicas finds every turn it had,
-- whichever replica answered it. The layout of the embedded index
-- (store/session_index.py): a row per session with its user and parent, a
-- row per turn and role with its text and its terms as ctxproxy tokenizes them
-- (store/memory_terms.py), so ranking is BM25 in Python over exactly the terms
-- the embedded index holds. A search reads the rows of the caller's session
-- tree by (tenant, session) and counts its statistics over the same rows.

CREATE TABLE session_tree (
    tenant text NOT NULL,
    session text NOT NULL,
    parent text NOT NULL,
    user_id text NOT NULL,
    project text NOT NULL,
    first_seen double precision NOT NULL,
    PRIMARY KEY (tenant, session)
);
CREATE INDEX session_tree_parent ON session_tree (tenant, parent);
CREATE INDEX session_tree_user ON session_tree (tenant, user_id, project, first_seen);

CREATE TABLE session_turns (
    tenant text NOT NULL,
    id bigint GENERATED ALWAYS AS IDENTITY,  -- the order turns were indexed in
    session text NOT NULL,
    turn_id text NOT NULL,
    role text NOT NULL,
    user_id text NOT NULL,
    project text NOT NULL,
    purpose text NOT NULL,
    observed_at double precision NOT NULL,
    text text NOT NULL,
    terms text NOT NULL,
    nterms integer NOT NULL,
    PRIMARY KEY (tenant, id),
    UNIQUE (tenant, session, turn_id, role)
);
CREATE INDEX session_turns_user ON session_turns (tenant, user_id);

DO $$
DECLARE t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['session_tree', 'session_turns'] LOOP
        EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
        EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', t);
        EXECUTE format('CREATE POLICY tenant_rows ON %I USING (ctx_tenant_visible(tenant)) '
                       'WITH CHECK (ctx_tenant_visible(tenant))', t);
    END LOOP;
END $$;
