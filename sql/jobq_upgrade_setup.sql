-- jobq_upgrade_setup (O5): the first test of "make installcheck-upgrade", which
-- runs the whole regression suite once more on an updated catalog: jobq is
-- created at 0.1.0 (the released install script) and updated to the
-- current version, and every later test, jobq_setup's audit first, must
-- give the same output as on a fresh install.
\set VERBOSITY terse
SET client_min_messages = warning;

CREATE EXTENSION jobq VERSION '0.1.0';
SELECT extversion FROM pg_extension WHERE extname = 'jobq';
ALTER EXTENSION jobq UPDATE;
SELECT extversion = (SELECT default_version FROM pg_available_extensions WHERE name = 'jobq')
       AS updated_to_default
FROM pg_extension WHERE extname = 'jobq';
