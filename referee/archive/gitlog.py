"""One git commit per change in the archive folder, written with dulwich (rules 109, 205, 213).

Each commit holds the archive exactly as it stood after one change (a proposal submitted,
adopted or failed, a ruling, an award), authored by the player who caused it, dated at the
event's time, with a message naming the proposal or appeal and the Message-ID of the mail that
decided it. `git log -- rules/209.toml` then answers what a rule said on any date. The trailer
`Archive-Change: N` records how far the repository has got, so `run` only adds what is new,
and a rebuild from the same event log gives the same commit ids.
"""

from __future__ import annotations

import re
from pathlib import Path

from dulwich.index import IndexEntry, commit_tree, index_entry_from_stat
from dulwich.objects import Blob, Commit, ObjectID
from dulwich.refs import Ref
from dulwich.repo import Repo

from referee.archive.history import Change, History
from referee.archive.progress import progress_bar
from referee.archive.writer import CHAIN_PATH, RulesetText, change_files

BRANCH = Ref(b"refs/heads/main")
_TRAILER = re.compile(rb"^Archive-Change: (\d+)$", re.M)
_FILE_MODE = 0o100644


def open_repo(folder: Path) -> Repo:
    folder.mkdir(parents=True, exist_ok=True)
    if (folder / ".git").is_dir():
        repo = Repo(str(folder))
    else:
        repo = Repo.init(str(folder))
        repo.refs.set_symbolic_ref(Ref(b"HEAD"), BRANCH)
    _exclude_current(folder)
    return repo


def _exclude_current(folder: Path) -> None:
    """The chain's head now (`chain.toml`, 213) names a mail, not a change: git keeps changes,
    so the file stays out of the commits and out of `git status` (`.git/info/exclude`)."""
    exclude = folder / ".git" / "info" / "exclude"
    line = f"/{CHAIN_PATH}"
    try:
        present = exclude.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        present = []
    if line not in present:
        exclude.parent.mkdir(parents=True, exist_ok=True)
        exclude.write_text("\n".join([*present, line]) + "\n", encoding="utf-8")


def committed_changes(repo: Repo) -> int:
    """How many changes the repository already holds (0 for a new one)."""
    head = repo.refs.as_dict().get(BRANCH)
    if head is None:
        return 0
    commit = repo[head]
    assert isinstance(commit, Commit)
    found = _TRAILER.search(commit.message)
    return int(found.group(1)) if found else 0


def message(change: Change) -> str:
    lines = [change.summary]
    body = []
    if change.author:
        body.append(f"By: {change.author}")
    if change.proposal is not None:
        body.append(f"Proposal: {change.proposal}")
    if change.appeal:
        body.append(f"Appeal: {change.appeal}")
    if change.message_id:
        body.append(f"Message-ID: {change.message_id}")
    body.append(f"Archive-Change: {change.ordinal}")
    return "\n".join([*lines, "", *body]) + "\n"


def _identity(name: str, email: str, fallback: str) -> bytes:
    if not email:
        return fallback.encode("utf-8")
    clean = name.replace("<", "").replace(">", "").strip() or email
    return f"{clean} <{email}>".encode()


def commit_history(
    folder: Path, history: History, mail_text: RulesetText, referee: str, progress: bool = False
) -> int:
    """Add a commit for every change not yet in the repository; returns how many were added."""
    repo = open_repo(folder)
    try:
        done = committed_changes(repo)
        todo = [c for c in history.changes if c.ordinal > done]
        if not todo:
            return 0
        head = repo.refs.as_dict().get(BRANCH)
        paths: dict[bytes, ObjectID] = {}
        touched: set[bytes] = set()
        if head is not None:
            parent = repo[head]
            assert isinstance(parent, Commit)
            for entry in repo.object_store.iter_tree_contents(parent.tree):
                assert entry.path is not None and entry.sha is not None
                paths[entry.path] = entry.sha
        committer = f"{history.name} referee <{referee}>"
        with progress_bar("git", len(todo), progress) as step:
            for change in todo:
                for relative, text in change_files(history, change, mail_text).items():
                    blob = Blob.from_string(text.encode("utf-8"))
                    key = relative.encode("utf-8")
                    if paths.get(key) != blob.id:
                        repo.object_store.add_object(blob)
                        paths[key] = blob.id
                        touched.add(key)
                tree = commit_tree(
                    repo.object_store, [(p, sha, _FILE_MODE) for p, sha in sorted(paths.items())]
                )
                commit = Commit()
                commit.tree = tree
                commit.parents = [head] if head is not None else []
                commit.author = _identity(change.author, change.author_email, committer)
                commit.committer = committer.encode("utf-8")
                stamp = int(change.at.timestamp())
                commit.author_time = commit.commit_time = stamp
                commit.author_timezone = commit.commit_timezone = 0
                commit.encoding = b"UTF-8"
                commit.message = message(change).encode("utf-8")
                repo.object_store.add_object(commit)
                head = commit.id
                step()
        assert head is not None
        repo.refs.set_if_equals(BRANCH, repo.refs.as_dict().get(BRANCH), head)
        _sync_index(repo, folder, paths, touched)
        return len(todo)
    finally:
        repo.close()


def _sync_index(
    repo: Repo, folder: Path, paths: dict[bytes, ObjectID], touched: set[bytes]
) -> None:
    """Make git's index name the new commit, so `git status` shows only what is not committed
    yet (votes since the last change). A file on disk that differs from the commit gets an
    entry git must look at again; the working files themselves are never touched."""
    index = repo.open_index()
    fresh = len(index) == 0
    for path, sha in paths.items():
        if not fresh and path not in touched:
            continue
        file = folder / path.decode("utf-8")
        try:
            stat = file.stat()
            same = Blob.from_string(file.read_bytes()).id == sha
        except FileNotFoundError:
            same = False
        if same:
            index[path] = index_entry_from_stat(stat, sha, _FILE_MODE)
        else:
            index[path] = IndexEntry(0, 0, 0, 0, _FILE_MODE, 0, 0, 0, sha)
    index.write()


def log(folder: Path) -> list[tuple[int, str, str]]:
    """(time, author, first line) of every commit, newest first."""
    repo = Repo(str(folder))
    try:
        out = []
        for entry in repo.get_walker():
            c = entry.commit
            out.append(
                (
                    c.commit_time,
                    c.author.decode("utf-8"),
                    c.message.decode("utf-8").splitlines()[0],
                )
            )
        return out
    finally:
        repo.close()
