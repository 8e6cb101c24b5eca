-- Indexes of the run database, created after the bulk load.
--
-- Only what heapledger's own readers use: the analyzer streams `block` in id (allocation)
-- order and needs alloc_seq for its bounds and its fallback order; everything else it does
-- in one pass. An index costs the ingest its build time (2 M events: block(pid, ptr) 0.74 s,
-- block(alloc_stack) 0.34 s, block(free_seq) 0.30 s against 2.2 s for the whole ingest
-- without them), so the ones only ad-hoc queries would use are left to the user:
--   CREATE INDEX block_ptr ON block(ptr);              -- address lookups
--   CREATE INDEX block_alloc_stack ON block(alloc_stack); -- blocks of one call stack
--   CREATE INDEX block_free_seq ON block(free_seq) WHERE free_seq IS NOT NULL;
CREATE INDEX IF NOT EXISTS block_alloc_seq ON block(alloc_seq);
CREATE INDEX IF NOT EXISTS kernel_event_ts ON kernel_event(ts);
