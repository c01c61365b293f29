-- Recall's reads of the memory index (0003), each one function call: one round
-- trip, and a plan the server keeps per connection (plpgsql caches its
-- statements' plans; a plan forced generic is made once), so a read pays for
-- neither a round trip per step nor the planning of a long statement. Nothing
-- outlives a transaction on the client's side: safe behind a transaction
-- pooler. SECURITY INVOKER (the default): row-level security applies, with the
-- tenant the caller's transaction set.
--
-- A word's counts and postings are read per visible partition and word, by the primary keys
-- (tenant, partition, term): never the word's rows in the tenant's other partitions.
--
-- recall_search is MemoryIndex._search (store/memory_index.py) step for step:
-- the statistics over the viewer's partitions; each word's visible document
-- frequency and its weight (visible idf, ln(1 + (N - df + 0.5) / (df + 0.5)) in
-- double precision, as Python's floats); the rows holding each substring and
-- their summed weights (the p_limit heaviest kept); the rarest words, taken
-- while their postings together stay within p_limit and none is frequent
-- (else every word, for a pool of p_small); the rows holding the most weight of
-- those words; those rows and the first neighbours of theirs. Its rows: one of
-- statistics (head: rows, terms, context terms, each word's and each
-- substring's frequency), then the candidates (head NULL).

-- What a viewer may see, the one place the rule is written: the partitions (every one; those whose
-- rows never expire; those holding rows that expire) and the never-expiring ones' kept sums.
CREATE FUNCTION recall_visible(p_tenant text, p_project text, p_user text, p_purpose text, p_sessions text[],
                               p_ceiling integer, p_exclude text[])
RETURNS TABLE (every bigint[], fixed bigint[], expiring bigint[], docs bigint, nterms bigint, nctx bigint)
LANGUAGE sql STABLE AS $$
    SELECT coalesce(array_agg(r.id), '{}'), coalesce(array_agg(r.id) FILTER (WHERE NOT r.expiring), '{}'),
           coalesce(array_agg(r.id) FILTER (WHERE r.expiring), '{}'),
           coalesce(sum(r.docs) FILTER (WHERE NOT r.expiring), 0)::bigint,
           coalesce(sum(r.nterms) FILTER (WHERE NOT r.expiring), 0)::bigint,
           coalesce(sum(r.nctx) FILTER (WHERE NOT r.expiring), 0)::bigint
    FROM recall_parts r WHERE r.tenant = p_tenant
    AND r.project IN ('', p_project) AND r.user_id IN ('', p_user) AND r.purpose IN ('', p_purpose)
    AND r.session = ANY(p_sessions) AND r.sensitivity <= p_ceiling AND r.kind <> ALL(p_exclude)
$$;

-- Rows, terms and context terms visible (the fixed partitions' kept sums, the expiring rows counted) and
-- each word's visible document frequency in p_words' order (the fixed partitions' counts, the expiring
-- rows' postings counted).
CREATE FUNCTION recall_counts(p_tenant text, p_now float8, p_words text[], p_fixed bigint[], p_expiring bigint[],
                              p_docs bigint, p_nterms bigint, p_nctx bigint)
RETURNS TABLE (docs bigint, nterms bigint, nctx bigint, freqs bigint[])
LANGUAGE sql STABLE AS $$
    SELECT (p_docs + x.docs)::bigint, (p_nterms + coalesce(x.nterms, 0))::bigint,
           (p_nctx + coalesce(x.nctx, 0))::bigint,
           ARRAY(SELECT (coalesce((SELECT sum(d.n) FROM unnest(p_fixed) AS vp(part)
                        JOIN recall_df d ON d.tenant = p_tenant AND d.part = vp.part AND d.term = q.term), 0)
                        + (SELECT count(*) FROM unnest(p_expiring) AS vp(part)
                           JOIN recall_postings p ON p.tenant = p_tenant AND p.part = vp.part AND p.term = q.term
                           JOIN recall_memories m ON m.tenant = p.tenant AND m.doc = p.doc
                           WHERE m.expires_at > p_now))::bigint
                 FROM unnest(p_words) WITH ORDINALITY AS q(term, i) ORDER BY q.i)
    FROM (SELECT count(*) AS docs, sum(m.nterms) AS nterms, sum(m.nctx) AS nctx FROM recall_memories m
          WHERE m.tenant = p_tenant AND m.part = ANY(p_expiring) AND m.expires_at > p_now) x
$$;

CREATE FUNCTION recall_search(p_tenant text, p_project text, p_user text, p_purpose text, p_sessions text[],
                              p_ceiling integer, p_exclude text[], p_now float8, p_words text[], p_pats text[],
                              p_limit integer, p_small integer, p_frequent float8, p_few float8)
RETURNS TABLE (head bigint[], memory_id text, external_id text, kind text, origin text, project text,
               user_id text, session text, purpose text, sensitivity smallint, observed_at float8,
               evergreen boolean, confidence float8, evidence_ref text, statement text, terms text,
               nterms integer, ctx text, nctx integer, doc bigint, near text)
LANGUAGE plpgsql STABLE SET plan_cache_mode = force_generic_plan AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    WITH ids AS MATERIALIZED (SELECT v.* FROM recall_visible(p_tenant, p_project, p_user, p_purpose, p_sessions, p_ceiling, p_exclude) v),
    -- rows, terms and context terms visible, and each word's visible document frequency
    st AS MATERIALIZED (SELECT c.* FROM ids v, recall_counts(p_tenant, p_now, p_words, v.fixed, v.expiring, v.docs, v.nterms, v.nctx) c),
    df AS (SELECT q.term, q.i, st.freqs[q.i] AS n FROM st, unnest(p_words) WITH ORDINALITY AS q(term, i)),
    nd AS (SELECT greatest(st.docs, 1)::float8 AS n FROM st),
    kw AS (SELECT df.term, df.i, df.n,
                  ln(1::float8 + ((nd.n - df.n::float8) + 0.5::float8) / (df.n::float8 + 0.5::float8)) AS w FROM df, nd),
    -- substrings: the rows holding each, its weight, each row's summed weight (in key order); the heaviest kept
    s AS (SELECT pat, i FROM unnest(p_pats) WITH ORDINALITY AS s(pat, i)),
    sd AS (SELECT s.i, x.doc FROM s CROSS JOIN LATERAL (SELECT m.doc FROM recall_memories m WHERE m.tenant = p_tenant
           AND m.statement ILIKE s.pat AND m.part = ANY((SELECT every FROM ids)::bigint[])
           AND (m.part <> ALL((SELECT expiring FROM ids)::bigint[]) OR m.expires_at > p_now)) x),
    sc AS (SELECT s.i, count(sd.doc) AS n FROM s LEFT JOIN sd ON sd.i = s.i GROUP BY s.i),
    sw AS (SELECT sc.i, ln(1::float8 + ((nd.n - sc.n::float8) + 0.5::float8) / (sc.n::float8 + 0.5::float8)) AS w
           FROM sc, nd),
    held AS (SELECT sd.doc, sum(sw.w ORDER BY sw.i) AS held FROM sd JOIN sw ON sw.i = sd.i GROUP BY sd.doc
             ORDER BY held DESC, sd.doc LIMIT p_limit),
    -- the rarest words (by frequency, then query order) while their postings stay within the pool and none is frequent
    ranked AS (SELECT kw.term, kw.n, kw.w, row_number() OVER o AS r, sum(kw.n) OVER o AS upto FROM kw WHERE kw.n > 0
               WINDOW o AS (ORDER BY kw.n, kw.i ROWS UNBOUNDED PRECEDING)),
    rare AS (SELECT ranked.term, ranked.n, ranked.w FROM ranked, st WHERE ranked.r = 1 OR (ranked.upto <= p_limit
             AND ranked.n::float8 <= greatest(p_frequent * st.docs::float8, p_few))),
    tot AS (SELECT coalesce(sum(rare.n), 0) AS n FROM rare),
    -- every word frequent: every word counts, for a smaller pool
    lim AS (SELECT CASE WHEN tot.n > p_limit THEN p_small ELSE p_limit END AS n, tot.n > p_limit AS every FROM tot),
    chosen AS (SELECT rare.term, rare.w FROM rare WHERE NOT (SELECT every FROM lim)
               UNION ALL SELECT kw.term, kw.w FROM kw WHERE kw.n > 0 AND (SELECT every FROM lim)),
    heavy AS (SELECT p.doc FROM chosen c CROSS JOIN unnest((SELECT every FROM ids)::bigint[]) AS vp(part)
              JOIN recall_postings p ON p.tenant = p_tenant AND p.part = vp.part AND p.term = c.term
              WHERE p.part <> ALL((SELECT expiring FROM ids)::bigint[]) OR EXISTS (SELECT 1 FROM recall_memories m
                    WHERE m.tenant = p.tenant AND m.doc = p.doc AND m.expires_at > p_now)
              GROUP BY p.doc ORDER BY round(sum(c.w)::numeric, 6) DESC, p.doc LIMIT (SELECT n FROM lim)),
    hits AS MATERIALIZED (SELECT held.doc FROM held UNION SELECT heavy.doc FROM heavy),
    -- the rows, and each neighbour at its first place (the row's doc, its place in the row's near)
    hit AS MATERIALIZED (
        SELECT m.memory_id, m.external_id, m.kind, m.origin, m.project, m.user_id, m.session, m.purpose, m.sensitivity,
               m.observed_at, m.evergreen, m.confidence, m.evidence_ref, m.statement, m.terms, m.nterms, m.ctx, m.nctx,
               m.doc, m.near
        FROM recall_memories m WHERE m.tenant = p_tenant AND m.doc IN (SELECT hits.doc FROM hits)
        AND m.part = ANY((SELECT every FROM ids)::bigint[])
        AND (m.part <> ALL((SELECT expiring FROM ids)::bigint[]) OR m.expires_at > p_now)),
    around AS (SELECT n.doc::bigint AS doc, min(ARRAY[h.doc, n.i]) AS place
               FROM hit h, unnest(string_to_array(h.near, ' ')) WITH ORDINALITY AS n(doc, i)
               WHERE n.doc::bigint NOT IN (SELECT hits.doc FROM hits) GROUP BY n.doc),
    first AS (SELECT around.doc FROM around ORDER BY around.place LIMIT (SELECT n FROM lim))
    SELECT NULL::bigint[], hit.* FROM hit
    UNION ALL
    SELECT NULL, m.memory_id, m.external_id, m.kind, m.origin, m.project, m.user_id, m.session, m.purpose, m.sensitivity,
           m.observed_at, m.evergreen, m.confidence, m.evidence_ref, m.statement, m.terms, m.nterms, m.ctx, m.nctx,
           m.doc, m.near
    FROM recall_memories m JOIN first f ON m.doc = f.doc WHERE m.tenant = p_tenant
    AND m.part = ANY((SELECT every FROM ids)::bigint[]) AND (m.part <> ALL((SELECT expiring FROM ids)::bigint[])
    OR m.expires_at > p_now)
    -- and the row of statistics: rows, terms, context terms, each word's and each substring's frequency
    UNION ALL
    SELECT ARRAY[st.docs, st.nterms, st.nctx] || st.freqs || ARRAY(SELECT sc.n FROM sc ORDER BY sc.i),
           NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
           NULL, NULL
    FROM st;
END $$;

-- The statistics of what a viewer may see (rows, terms, context terms) and each word's document frequency
-- among them: MemoryIndex.stats and doc_freqs.
CREATE FUNCTION recall_doc_freqs(p_tenant text, p_project text, p_user text, p_purpose text, p_sessions text[],
                                 p_ceiling integer, p_exclude text[], p_now float8, p_words text[])
RETURNS TABLE (docs bigint, nterms bigint, nctx bigint, freqs bigint[])
LANGUAGE plpgsql STABLE SET plan_cache_mode = force_generic_plan AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    SELECT c.* FROM recall_visible(p_tenant, p_project, p_user, p_purpose, p_sessions, p_ceiling, p_exclude) v, recall_counts(p_tenant, p_now, p_words, v.fixed, v.expiring, v.docs, v.nterms, v.nctx) c;
END $$;

-- The candidates of these memory ids a viewer may see (by doc): MemoryIndex.fetch.
CREATE FUNCTION recall_fetch(p_tenant text, p_project text, p_user text, p_purpose text, p_sessions text[],
                             p_ceiling integer, p_exclude text[], p_now float8, p_ids text[])
RETURNS TABLE (memory_id text, external_id text, kind text, origin text, project text, user_id text, session text,
               purpose text, sensitivity smallint, observed_at float8, evergreen boolean, confidence float8,
               evidence_ref text, statement text, terms text, nterms integer, ctx text, nctx integer, doc bigint,
               near text)
LANGUAGE plpgsql STABLE SET plan_cache_mode = force_generic_plan AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    WITH ids AS MATERIALIZED (SELECT v.every, v.expiring FROM recall_visible(p_tenant, p_project, p_user, p_purpose, p_sessions, p_ceiling, p_exclude) v)
    SELECT m.memory_id, m.external_id, m.kind, m.origin, m.project, m.user_id, m.session, m.purpose, m.sensitivity,
           m.observed_at, m.evergreen, m.confidence, m.evidence_ref, m.statement, m.terms, m.nterms, m.ctx, m.nctx,
           m.doc, m.near
    FROM recall_memories m WHERE m.tenant = p_tenant AND m.memory_id = ANY(p_ids)
    AND m.part = ANY((SELECT every FROM ids)::bigint[])
    AND (m.part <> ALL((SELECT expiring FROM ids)::bigint[]) OR m.expires_at > p_now)
    ORDER BY m.doc;
END $$;
