"""What the commands decide, apart from how they say it: pip's `operations` beside `commands`.

Each module holds one command's policy as a library function that returns a typed report
(`importing.import_rules` -> `ImportReport`, `replaying.replay_record` -> `ReplayReport`);
`referee.cli` only parses arguments, calls it and prints the report. `verify`'s policy is the
package `referee.verify`, whose `verify` returns its `Verdict` the same way. A new command's
decisions go in a module here; its flags and its wording stay in the CLI. The operator's
housekeeping commands (issue 29: `prune`) live here the same way.
"""
