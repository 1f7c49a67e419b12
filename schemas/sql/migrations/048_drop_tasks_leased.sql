-- 048: an index nothing reads, no longer written by every claim and report.
--
-- tasks_leased indexed the leased tasks by deadline for the scan that
-- expired them in the database; the coordinator times leases in memory
-- since 045, and nothing reads the index.  Every claim and report still
-- wrote it (a report sets the deadline: a new index entry per report).
DROP INDEX IF EXISTS tasks_leased;
