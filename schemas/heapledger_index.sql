-- Indexes of the run database, created after the bulk load.
CREATE INDEX IF NOT EXISTS block_alloc_seq ON block(alloc_seq);
CREATE INDEX IF NOT EXISTS block_free_seq ON block(free_seq) WHERE free_seq IS NOT NULL;
CREATE INDEX IF NOT EXISTS block_ptr ON block(pid, ptr);
CREATE INDEX IF NOT EXISTS block_alloc_stack ON block(alloc_stack);
CREATE INDEX IF NOT EXISTS kernel_event_ts ON kernel_event(ts);
