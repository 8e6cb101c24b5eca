-- tests/analyzer/discarded.sql — applied over basic.sql: the tracer lost 40 events.
UPDATE run SET discarded_events = 40;
