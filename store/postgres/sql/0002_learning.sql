-- The learning job's state per tenant, under the names the embedded store uses
-- (store/learning_state.py): the lease, the job state and its watermarks, the
-- extraction feed, rejected proposals and each learned memory's evidence. One
-- table, so the job's writes for a tenant are serialized by one advisory lock
-- (a lease taken by two replicas at once would otherwise be held by both).
-- The lease lives here too: the leases table of the first schema goes.

DROP TABLE leases;

CREATE TABLE learning (
    tenant text NOT NULL,
    name bytea NOT NULL,
    value bytea NOT NULL,
    PRIMARY KEY (tenant, name)
);

ALTER TABLE learning ENABLE ROW LEVEL SECURITY;
ALTER TABLE learning FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_rows ON learning USING (ctx_tenant_visible(tenant)) WITH CHECK (ctx_tenant_visible(tenant));
