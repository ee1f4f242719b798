"""One typed payload per outcome of a command: accepted (`Done`) or refused (`Reason`) (103-215).

Each code has exactly one frozen dataclass here, whose fields are what the reply's line for it
may print; handlers return an accepted payload, refusals carry a refused one, and mypy checks
both. A test keeps every outcome and refusal macro asking only for its own payload's fields.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, ClassVar

from referee.core.model import field_names


class Done(enum.StrEnum):
    """Codes of accepted commands; each has a template in every language."""

    PROPOSAL_ACCEPTED = "proposal_accepted"
    REVISION_ACCEPTED = "revision_accepted"
    VOTE_RECORDED = "vote_recorded"
    VOTE_REPLACED = "vote_replaced"
    APPEAL_OPENED = "appeal_opened"
    ACCUSATION_OPENED = "accusation_opened"
    APPEAL_WAITING = "appeal_waiting"  # 212: beyond the day's limit, it opens on a later day
    CHAMPION_NAMED = "champion_named"
    RULING_PUBLISHED = "ruling_published"
    AGREEMENT_RECORDED = "agreement_recorded"
    CROWNED = "crowned"
    AWARD_RECORDED = "award_recorded"
    DEBATE_EXTENDED = "debate_extended"
    QUIT_RECORDED = "quit_recorded"
    PARAMETERS_CONFIRMED = "parameters_confirmed"
    PARAMETER_SET = "parameter_set"
    WINNER_NAMED = "winner_named"
    STATUS = "status"
    RULES = "rules"
    RULE = "rule"
    HISTORY = "history"
    SCORES = "scores"
    HELP = "help"
    ARCHIVE_SENT = "archive_sent"  # ARCHIVE: the players' mail and the config, attached (213)
    ARCHIVE_LINKED = "archive_linked"  # ARCHIVE past the mail's limit: links to the site (213)
    JOIN_ASKED = "join_asked"  # a confirmed request reached the King
    JOIN_CONFIRM_SENT = "join_confirm_sent"  # the mail layer asked the address to confirm
    ADMITTED = "admitted"  # the King's yes or no
    ADDRESS_MOVED = "address_moved"
    ADDRESS_CONFIRM_SENT = "address_confirm_sent"  # the new address is asked to confirm
    ENROLLED = "enrolled"  # the operator added a player
    DEBATE_RELAYED = "debate_relayed"
    DELIVERY_CHOSEN = "delivery_chosen"
    CONFIRM_NEEDED = "confirm_needed"  # plain words read as a command, waiting for a bare yes
    ACTION_DONE = "action_done"  # issue 26: an action a rule in force declares
    ACTION_OFFERED = "action_offered"  # an action the named player accepts
    OFFER_ACCEPTED = "offer_accepted"
    QUESTION_ANSWERED = "question_answered"  # the King's yes or no to a rule's ASK


class Reason(enum.StrEnum):
    """Why a command was refused; each has a template in every language."""

    ACTION_REFUSED = "action_refused"  # issue 26: `why` is the interpreter's StopReason

    GAME_OVER = "game_over"
    NOT_ACTIVE = "not_active"
    NOT_YOUR_TURN = "not_your_turn"
    WRONG_PHASE = "wrong_phase"
    APPEAL_PENDING = "appeal_pending"
    NOT_KING = "not_king"
    NOT_JUDGE = "not_judge"
    NOT_PROPOSER = "not_proposer"
    UNKNOWN_RULE = "unknown_rule"
    AMBIGUOUS_RULE = "ambiguous_rule"  # a label several rules share
    RULE_REPEALED = "rule_repealed"
    RULE_IMMUTABLE = "rule_immutable"
    ENACT_IMMUTABLE = "enact_immutable"
    UNKNOWN_AMENDMENT = "unknown_amendment"
    EMPTY_TEXT = "empty_text"
    TOO_MANY_MUTABLE = "too_many_mutable"
    NO_MUTABLE_LEFT = "no_mutable_left"
    UNKNOWN_PROPOSAL = "unknown_proposal"
    VOTE_CLOSED = "vote_closed"
    DEBATE_OVER = "debate_over"
    NO_TEXT_TO_REVISE = "no_text_to_revise"
    UNKNOWN_PARAMETER = "unknown_parameter"
    BAD_PARAMETER = "bad_parameter"
    PARAMETER_NOT_ALLOWED = "parameter_not_allowed"
    NO_PARAMETER_QUESTION = "no_parameter_question"
    AWARD_OUT_OF_RANGE = "award_out_of_range"
    BAD_DAYS = "bad_days"
    UNKNOWN_PLAYER = "unknown_player"
    UNKNOWN_APPEAL = "unknown_appeal"
    APPEAL_SETTLED = "appeal_settled"
    NO_RULING_YET = "no_ruling_yet"
    KING_CANNOT_JUDGE = "king_cannot_judge"
    JUDGE_ALREADY_NAMED = "judge_already_named"
    KING_CANNOT_ACCUSE = "king_cannot_accuse"
    NO_KING = "no_king"
    NOT_DEPOSED = "not_deposed"
    CANNOT_CROWN_SELF = "cannot_crown_self"
    VERDICT_NEEDED = "verdict_needed"
    NO_TIE = "no_tie"
    NOT_IN_TIE = "not_in_tie"
    SYNTAX = "syntax"
    NO_COMMAND = "no_command"
    NOT_AUTHENTICATED = "not_authenticated"
    TOO_LARGE = "too_large"
    # Refusals of the mail layer (referee/mail, issue 7): what the player wrote, and limits.
    NO_SINGLE_SENDER = "no_single_sender"
    DUPLICATE_HEADER = "duplicate_header"
    TOO_LONG = "too_long"
    HEADER_TOO_LONG = "header_too_long"  # Subject, From, To, Cc or Date over the limit
    TOO_MANY_COMMANDS = "too_many_commands"
    TOO_MANY_APPEALS = "too_many_appeals"
    TOO_MANY_MAILS = "too_many_mails"
    DAILY_LIMIT = "daily_limit"
    QUOTED_NOTICE = "quoted_notice"
    TWO_ANSWERS = "two_answers"  # two different answers to one question in one mail
    # The roster (201, 114): who may join, vote and move.
    ALREADY_PLAYING = "already_playing"
    REQUEST_PENDING = "request_pending"
    NAME_TAKEN = "name_taken"
    NAME_UNSAFE = "name_unsafe"
    MAILBOX_PLAYING = "mailbox_playing"
    LOOKALIKE_NEEDS_WRITTEN_YES = "lookalike_needs_written_yes"
    UNKNOWN_REQUEST = "unknown_request"
    ADDRESS_TAKEN = "address_taken"
    ADDRESS_OF_GAME = "address_of_game"  # a player cannot move to the game's own address
    NOT_A_VOTER = "not_a_voter"  # joined after the proposal was circulated
    JOINS_FULL = "joins_full"  # the day's requests from strangers are used up
    NOT_ADDRESSED = "not_addressed"  # the mail was written to someone else
    ALREADY_RELAYED = "already_relayed"  # 112: the same words are relayed once
    DEBATE_TOO_LONG = "debate_too_long"
    DEBATE_DAILY_LIMIT = "debate_daily_limit"
    ARCHIVE_DAILY_LIMIT = "archive_daily_limit"  # ARCHIVE once a day per player
    ARCHIVE_TOO_LARGE = "archive_too_large"  # the record is past [limits] archive_bytes
    APPEALS_DAILY_LIMIT = "appeals_daily_limit"  # 212: appeals one player opens in a day
    QUERY_REPEATED = "query_repeated"  # the same question twice in one mail: answered once
    ANSWERS_FULL = "answers_full"  # the reply already holds as many answers as one may
    PARTS_DISAGREE = "parts_disagree"  # a command in the text part or the HTML part only
    ATTACHED_IGNORED = "attached_ignored"  # a command inside an attached (forwarded) message
    NOT_IN_FORCE = "not_in_force"  # no rule in force grants the move any more
    PLAYER_LEFT = "player_left"  # 114: the player named has left the game
    NO_JUDGE_YET = "no_judge_yet"  # 212: the appeal waits for the King to name a Champion
    ACCUSED_NOT_KING = "accused_not_king"  # 213: a waiting accusation's King no longer reigns


View = dict[str, Any]  # a plain-data view (referee.core.view)


@dataclass(frozen=True)
class Accepted:
    """The base of every accepted command's payload."""

    code: ClassVar[Done]

    def fields(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in field_names(type(self))}


@dataclass(frozen=True)
class Refused:
    """The base of every refusal's payload."""

    code: ClassVar[Reason]

    def fields(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in field_names(type(self))}


@dataclass(frozen=True)
class ProposalAccepted(Accepted):
    code: ClassVar[Done] = Done.PROPOSAL_ACCEPTED
    number: int
    debate_ends: datetime
    vote_deadline: datetime


@dataclass(frozen=True)
class RevisionAccepted(Accepted):
    code: ClassVar[Done] = Done.REVISION_ACCEPTED
    number: int
    voided: int


@dataclass(frozen=True)
class VoteRecorded(Accepted):
    code: ClassVar[Done] = Done.VOTE_RECORDED
    number: int
    yes: bool


@dataclass(frozen=True)
class VoteReplaced(Accepted):
    code: ClassVar[Done] = Done.VOTE_REPLACED
    number: int
    yes: bool


@dataclass(frozen=True)
class AppealOpened(Accepted):
    code: ClassVar[Done] = Done.APPEAL_OPENED
    id: str
    judge: str


@dataclass(frozen=True)
class AccusationOpened(Accepted):
    code: ClassVar[Done] = Done.ACCUSATION_OPENED
    id: str


@dataclass(frozen=True)
class AppealWaiting(Accepted):
    """212: the sender opened `limit` appeals or accusations today; this one waits, number
    `position` in his line, and opens at `opens` (a midnight UTC) if the rules allow it then."""

    code: ClassVar[Done] = Done.APPEAL_WAITING
    accusation: bool
    limit: int
    position: int
    opens: datetime


@dataclass(frozen=True)
class ChampionNamed(Accepted):
    code: ClassVar[Done] = Done.CHAMPION_NAMED
    id: str
    champion: str


@dataclass(frozen=True)
class RulingPublished(Accepted):
    code: ClassVar[Done] = Done.RULING_PUBLISHED
    id: str


@dataclass(frozen=True)
class AgreementRecorded(Accepted):
    code: ClassVar[Done] = Done.AGREEMENT_RECORDED
    id: str
    agree: bool


@dataclass(frozen=True)
class Crowned(Accepted):
    code: ClassVar[Done] = Done.CROWNED
    king: str


@dataclass(frozen=True)
class AwardRecorded(Accepted):
    code: ClassVar[Done] = Done.AWARD_RECORDED
    points: int
    player: str


@dataclass(frozen=True)
class DebateExtended(Accepted):
    code: ClassVar[Done] = Done.DEBATE_EXTENDED
    number: int
    debate_ends: datetime
    vote_deadline: datetime


@dataclass(frozen=True)
class QuitRecorded(Accepted):
    code: ClassVar[Done] = Done.QUIT_RECORDED
    waiting: int = 0  # the player's appeals that waited for a day of his limit: never opened


@dataclass(frozen=True)
class ParametersConfirmed(Accepted):
    code: ClassVar[Done] = Done.PARAMETERS_CONFIRMED
    rule: int
    parameters: list[View]


@dataclass(frozen=True)
class ParameterSet(Accepted):
    code: ClassVar[Done] = Done.PARAMETER_SET
    rule: int
    name: str
    value: str


@dataclass(frozen=True)
class WinnerNamed(Accepted):
    code: ClassVar[Done] = Done.WINNER_NAMED
    winner: str


@dataclass(frozen=True)
class Status(Accepted):
    code: ClassVar[Done] = Done.STATUS
    phase: str
    player: str
    proposal: int | None
    deadline: datetime | None
    king: str
    round: int
    adoption: str
    appeals: list[str]
    winner: str | None
    missing: list[str]
    appeal_waits: list[dict[str, Any]] = field(default_factory=list)  # who each appeal waits for
    waiting_appeals: list[dict[str, Any]] = field(default_factory=list)  # the asker's, to open


@dataclass(frozen=True)
class Rules(Accepted):
    """RULES: the ruleset and the scores (205 on demand). The engine answers with the rules;
    the service names the files it attached them as when they are too long for the reply's
    body (`[limits] ruleset_chars`), as it fills in ARCHIVE's."""

    code: ClassVar[Done] = Done.RULES
    rules: list[View]
    scores: list[View]
    adoption: str
    parameters: dict[str, int]
    king: str
    house_values: list[View]  # parameters no rule carries, with their house value
    files: tuple[str, ...] = ()  # the attached files' names; () when in the body


@dataclass(frozen=True)
class Rule(Accepted):
    code: ClassVar[Done] = Done.RULE
    asked: int | None
    rule: View


@dataclass(frozen=True)
class History(Accepted):
    code: ClassVar[Done] = Done.HISTORY
    asked: int | None
    rule: View


@dataclass(frozen=True)
class Scores(Accepted):
    code: ClassVar[Done] = Done.SCORES
    scores: list[View]


@dataclass(frozen=True)
class Help(Accepted):
    code: ClassVar[Done] = Done.HELP


@dataclass(frozen=True)
class ArchiveSent(Accepted):
    """ARCHIVE (213): the players' mail and the game's config go with the reply. The engine
    records the request; the service, which reads the record, fills in what it attached."""

    code: ClassVar[Done] = Done.ARCHIVE_SENT
    messages: int = 0  # the players' mails in the attached mbox
    size: str = ""  # the attachment's size, as written for a reader ("1.2 MB")
    withheld: int = 0  # the mails of others, each in it as a stand-in
    link: int = 0  # the number of the record's last link of the hash chain
    head: str = ""  # that link's head: `verify` reaches it, and the mail of that link names it


@dataclass(frozen=True)
class ArchiveLinked(Accepted):
    """ARCHIVE (213) past `[limits] archive_bytes`: the record is written on the game's site
    under a name only its bytes give (its SHA-256), linked from no page; the reply gives the
    links. The service fills them in."""

    code: ClassVar[Done] = Done.ARCHIVE_LINKED
    messages: int
    withheld: int
    size: str
    mailbox: str  # the URL of mail.mbox.gz
    config: str  # the URL of game.toml
    link: int = 0  # the number of the record's last link of the hash chain
    head: str = ""  # that link's head (see `ArchiveSent`)


@dataclass(frozen=True)
class ArchiveDailyLimit(Refused):
    code: ClassVar[Reason] = Reason.ARCHIVE_DAILY_LIMIT
    next: datetime  # when the player may ask again (midnight UTC)


@dataclass(frozen=True)
class ArchiveTooLarge(Refused):
    code: ClassVar[Reason] = Reason.ARCHIVE_TOO_LARGE
    size: str
    limit: str


@dataclass(frozen=True)
class GameOver(Refused):
    code: ClassVar[Reason] = Reason.GAME_OVER
    winner: str


@dataclass(frozen=True)
class NotActive(Refused):
    code: ClassVar[Reason] = Reason.NOT_ACTIVE


@dataclass(frozen=True)
class NotYourTurn(Refused):
    code: ClassVar[Reason] = Reason.NOT_YOUR_TURN
    player: str


@dataclass(frozen=True)
class WrongPhase(Refused):
    code: ClassVar[Reason] = Reason.WRONG_PHASE
    phase: str
    mechanic: str  # what orders the turn's parts: "turn" (202) or "winning" (209's tie)


@dataclass(frozen=True)
class AppealPending(Refused):
    code: ClassVar[Reason] = Reason.APPEAL_PENDING
    appeals: list[str]


@dataclass(frozen=True)
class NotKing(Refused):
    code: ClassVar[Reason] = Reason.NOT_KING
    king: str


@dataclass(frozen=True)
class NotJudge(Refused):
    code: ClassVar[Reason] = Reason.NOT_JUDGE
    id: str
    judge: str


@dataclass(frozen=True)
class NotProposer(Refused):
    code: ClassVar[Reason] = Reason.NOT_PROPOSER
    number: int


@dataclass(frozen=True)
class UnknownRule(Refused):
    code: ClassVar[Reason] = Reason.UNKNOWN_RULE
    rule: int | str | None  # a number, or a label or path as the player wrote it


@dataclass(frozen=True)
class AmbiguousRule(Refused):
    """A label several rules share (`III` in each chapter): their numbers and paths."""

    code: ClassVar[Reason] = Reason.AMBIGUOUS_RULE
    rule: int | str
    rules: tuple[View, ...]


@dataclass(frozen=True)
class RuleRepealed(Refused):
    code: ClassVar[Reason] = Reason.RULE_REPEALED
    rule: int | str | None


@dataclass(frozen=True)
class RuleImmutable(Refused):
    code: ClassVar[Reason] = Reason.RULE_IMMUTABLE
    rule: int


@dataclass(frozen=True)
class EnactImmutable(Refused):
    code: ClassVar[Reason] = Reason.ENACT_IMMUTABLE


@dataclass(frozen=True)
class UnknownAmendment(Refused):
    code: ClassVar[Reason] = Reason.UNKNOWN_AMENDMENT
    amendment: str


@dataclass(frozen=True)
class EmptyText(Refused):
    code: ClassVar[Reason] = Reason.EMPTY_TEXT


@dataclass(frozen=True)
class TooManyMutable(Refused):
    code: ClassVar[Reason] = Reason.TOO_MANY_MUTABLE
    cap: int
    count: int


@dataclass(frozen=True)
class NoMutableLeft(Refused):
    code: ClassVar[Reason] = Reason.NO_MUTABLE_LEFT


@dataclass(frozen=True)
class UnknownProposal(Refused):
    code: ClassVar[Reason] = Reason.UNKNOWN_PROPOSAL
    number: int


@dataclass(frozen=True)
class VoteClosed(Refused):
    code: ClassVar[Reason] = Reason.VOTE_CLOSED
    number: int
    status: str


@dataclass(frozen=True)
class DebateOver(Refused):
    code: ClassVar[Reason] = Reason.DEBATE_OVER
    number: int


@dataclass(frozen=True)
class NoTextToRevise(Refused):
    code: ClassVar[Reason] = Reason.NO_TEXT_TO_REVISE
    number: int


@dataclass(frozen=True)
class UnknownParameter(Refused):
    code: ClassVar[Reason] = Reason.UNKNOWN_PARAMETER
    name: str
    value: str
    allowed: str


@dataclass(frozen=True)
class BadParameter(Refused):
    code: ClassVar[Reason] = Reason.BAD_PARAMETER
    name: str
    value: str
    allowed: str
    least_days: int = 0  # the bound is the shortest debate (112): written in words, not ">="
    question: int = 0  # the rule whose question to the King this SET answered: still open


@dataclass(frozen=True)
class ParameterNotAllowed(Refused):
    code: ClassVar[Reason] = Reason.PARAMETER_NOT_ALLOWED
    kind: str


@dataclass(frozen=True)
class NoParameterQuestion(Refused):
    code: ClassVar[Reason] = Reason.NO_PARAMETER_QUESTION
    rule: int | str | None = None
    name: str = ""


@dataclass(frozen=True)
class AwardOutOfRange(Refused):
    code: ClassVar[Reason] = Reason.AWARD_OUT_OF_RANGE
    low: int
    high: int


@dataclass(frozen=True)
class BadDays(Refused):
    code: ClassVar[Reason] = Reason.BAD_DAYS
    days: int


@dataclass(frozen=True)
class UnknownPlayer(Refused):
    code: ClassVar[Reason] = Reason.UNKNOWN_PLAYER
    who: str


@dataclass(frozen=True)
class UnknownAppeal(Refused):
    code: ClassVar[Reason] = Reason.UNKNOWN_APPEAL
    id: str


@dataclass(frozen=True)
class AppealSettled(Refused):
    code: ClassVar[Reason] = Reason.APPEAL_SETTLED
    id: str


@dataclass(frozen=True)
class NoRulingYet(Refused):
    code: ClassVar[Reason] = Reason.NO_RULING_YET
    id: str


@dataclass(frozen=True)
class KingCannotJudge(Refused):
    code: ClassVar[Reason] = Reason.KING_CANNOT_JUDGE
    id: str


@dataclass(frozen=True)
class JudgeAlreadyNamed(Refused):
    code: ClassVar[Reason] = Reason.JUDGE_ALREADY_NAMED
    id: str
    judge: str


@dataclass(frozen=True)
class KingCannotAccuse(Refused):
    code: ClassVar[Reason] = Reason.KING_CANNOT_ACCUSE


@dataclass(frozen=True)
class NoKing(Refused):
    code: ClassVar[Reason] = Reason.NO_KING


@dataclass(frozen=True)
class NotDeposed(Refused):
    code: ClassVar[Reason] = Reason.NOT_DEPOSED


@dataclass(frozen=True)
class CannotCrownSelf(Refused):
    code: ClassVar[Reason] = Reason.CANNOT_CROWN_SELF


@dataclass(frozen=True)
class VerdictNeeded(Refused):
    code: ClassVar[Reason] = Reason.VERDICT_NEEDED
    id: str


@dataclass(frozen=True)
class NoTie(Refused):
    code: ClassVar[Reason] = Reason.NO_TIE


@dataclass(frozen=True)
class NotInTie(Refused):
    code: ClassVar[Reason] = Reason.NOT_IN_TIE
    who: str


@dataclass(frozen=True)
class Syntax(Refused):
    code: ClassVar[Reason] = Reason.SYNTAX
    syntax: str
    problem: str
    hint: str = ""  # the line with a misspelt word put right, when that reads as the command


@dataclass(frozen=True)
class NoCommand(Refused):
    code: ClassVar[Reason] = Reason.NO_COMMAND
    hint: str
    other: str = ""  # the other command the thread waits for ("AGREE A1" or "DISAGREE A1")
    next: datetime | None = None  # the day's last such answer: when mail is answered again
    # what the mail begins with that ends the sender's own words at once, so none was read:
    # "footer" ("Sent from my iPhone"), "signature" ("-- ") or "header" (a header block), and
    # that line
    cut: str = ""
    cut_line: str = ""


@dataclass(frozen=True)
class NotAuthenticated(Refused):
    code: ClassVar[Reason] = Reason.NOT_AUTHENTICATED
    why: str


@dataclass(frozen=True)
class TooLarge(Refused):
    code: ClassVar[Reason] = Reason.TOO_LARGE
    limit: str


@dataclass(frozen=True)
class NoSingleSender(Refused):
    code: ClassVar[Reason] = Reason.NO_SINGLE_SENDER
    why: str


@dataclass(frozen=True)
class DuplicateHeader(Refused):
    code: ClassVar[Reason] = Reason.DUPLICATE_HEADER
    headers: str


@dataclass(frozen=True)
class HeaderTooLong(Refused):
    """A header the referee reads (or quotes back) longer than `[limits] max_header_chars`."""

    code: ClassVar[Reason] = Reason.HEADER_TOO_LONG
    header: str
    length: str
    limit: str


@dataclass(frozen=True)
class TooLong(Refused):
    code: ClassVar[Reason] = Reason.TOO_LONG
    length: str
    limit: str


@dataclass(frozen=True)
class TooManyCommands(Refused):
    code: ClassVar[Reason] = Reason.TOO_MANY_COMMANDS
    count: int
    limit: int


@dataclass(frozen=True)
class TooManyAppeals(Refused):
    code: ClassVar[Reason] = Reason.TOO_MANY_APPEALS
    count: int
    limit: int


@dataclass(frozen=True)
class TooManyMails(Refused):
    code: ClassVar[Reason] = Reason.TOO_MANY_MAILS
    queued: int
    limit: int


@dataclass(frozen=True)
class DailyLimit(Refused):
    code: ClassVar[Reason] = Reason.DAILY_LIMIT
    what: str  # "mails" | "commands"
    limit: int
    next: datetime | None = None  # when this sender's mail is read and answered again


@dataclass(frozen=True)
class NotAddressed(Refused):
    """A player's signed mail addressed elsewhere (another game, another player): a copy of it
    sent here must not act (issue 15)."""

    code: ClassVar[Reason] = Reason.NOT_ADDRESSED
    address: str
    why: str  # "elsewhere": not in To or Cc; "unsigned": only in a header DKIM does not sign;
    # "other_game": another game of this referee applied this very mail already


@dataclass(frozen=True)
class QuotedNotice(Refused):
    code: ClassVar[Reason] = Reason.QUOTED_NOTICE
    where: str


@dataclass(frozen=True)
class TwoAnswers(Refused):
    """Two different answers to one question in one mail (VOTE 301 YES and VOTE 301 NO):
    never resolved by their order; both refused, the player asked again."""

    code: ClassVar[Reason] = Reason.TWO_ANSWERS
    other: str  # the other line


@dataclass(frozen=True)
class JoinAsked(Accepted):
    code: ClassVar[Done] = Done.JOIN_ASKED
    name: str
    king: str


@dataclass(frozen=True)
class JoinConfirmSent(Accepted):
    code: ClassVar[Done] = Done.JOIN_CONFIRM_SENT
    name: str


@dataclass(frozen=True)
class Admitted(Accepted):
    code: ClassVar[Done] = Done.ADMITTED
    name: str
    yes: bool
    round: int  # the round in which the newcomer first takes a turn


@dataclass(frozen=True)
class AddressMoved(Accepted):
    code: ClassVar[Done] = Done.ADDRESS_MOVED
    name: str
    new: str


@dataclass(frozen=True)
class AddressConfirmSent(Accepted):
    code: ClassVar[Done] = Done.ADDRESS_CONFIRM_SENT
    new: str


@dataclass(frozen=True)
class Enrolled(Accepted):
    code: ClassVar[Done] = Done.ENROLLED
    name: str
    round: int


@dataclass(frozen=True)
class AlreadyPlaying(Refused):
    code: ClassVar[Reason] = Reason.ALREADY_PLAYING
    email: str


@dataclass(frozen=True)
class NameTaken(Refused):
    """201: a newcomer's name reads as a current player's (`names.key`): join under your own."""

    code: ClassVar[Reason] = Reason.NAME_TAKEN
    name: str  # the player's, as the table knows it


@dataclass(frozen=True)
class NameUnsafe(Refused):
    """201: a newcomer's name holds what would end a display name in a header and begin an
    address or a second mailbox (`names.unsafe`): `JOIN Eve Adams <ada@example.org>`."""

    code: ClassVar[Reason] = Reason.NAME_UNSAFE
    characters: list[str]  # each one shown as a reader can tell it (a control as U+0007)


@dataclass(frozen=True)
class MailboxPlaying(Refused):
    """201: the newcomer's address reaches a player's mailbox (a "+tag", other capitals):
    one mailbox holds one seat, as for a move of address (`AddressTaken`)."""

    code: ClassVar[Reason] = Reason.MAILBOX_PLAYING
    email: str  # the newcomer's address


@dataclass(frozen=True)
class LookalikeNeedsWrittenYes(Refused):
    """201: the newcomer's name or address looks like a player's (Unicode's confusables); a
    bare "yes" to the prompt does not admit it, `ADMIT N YES` written out does."""

    code: ClassVar[Reason] = Reason.LOOKALIKE_NEEDS_WRITTEN_YES
    number: int
    name: str
    lookalike: list[str]  # "Name (address)" of each player it looks like


@dataclass(frozen=True)
class RequestPending(Refused):
    code: ClassVar[Reason] = Reason.REQUEST_PENDING
    email: str


@dataclass(frozen=True)
class UnknownRequest(Refused):
    code: ClassVar[Reason] = Reason.UNKNOWN_REQUEST
    number: int


@dataclass(frozen=True)
class AddressTaken(Refused):
    code: ClassVar[Reason] = Reason.ADDRESS_TAKEN
    email: str


@dataclass(frozen=True)
class AddressOfGame(Refused):
    code: ClassVar[Reason] = Reason.ADDRESS_OF_GAME
    email: str


@dataclass(frozen=True)
class NotAVoter(Refused):
    code: ClassVar[Reason] = Reason.NOT_A_VOTER
    number: int


@dataclass(frozen=True)
class JoinsFull(Refused):
    code: ClassVar[Reason] = Reason.JOINS_FULL
    limit: int


@dataclass(frozen=True)
class DebateRelayed(Accepted):
    """112: the words went to the table: `relayed` players now, `digest` in tonight's digest."""

    code: ClassVar[Done] = Done.DEBATE_RELAYED
    proposal: int | None
    relayed: int
    digest: int


@dataclass(frozen=True)
class DeliveryChosen(Accepted):
    code: ClassVar[Done] = Done.DELIVERY_CHOSEN
    delivery: str  # "all" | "digest" | "none"


@dataclass(frozen=True)
class ConfirmNeeded(Accepted):
    code: ClassVar[Done] = Done.CONFIRM_NEEDED
    meant: str  # the command, written out
    form: str = ""  # the command's form, when the line was that command misspelt


@dataclass(frozen=True)
class AlreadyRelayed(Refused):
    code: ClassVar[Reason] = Reason.ALREADY_RELAYED
    proposal: int | None


@dataclass(frozen=True)
class DebateTooLong(Refused):
    code: ClassVar[Reason] = Reason.DEBATE_TOO_LONG
    length: str
    limit: str


@dataclass(frozen=True)
class AppealsDailyLimit(Refused):
    """212: a player opened `limit` appeals or accusations today and `waiting` more already
    wait for later days, the most that may (0: none may wait); this one is not taken."""

    code: ClassVar[Reason] = Reason.APPEALS_DAILY_LIMIT
    limit: int
    waiting: int
    next: datetime  # when one of his waiting opens (or the day turns): send it again then


@dataclass(frozen=True)
class QueryRepeated(Refused):
    """The same question (RULES, RULE N, ...) asked again in one mail: answered once above."""

    code: ClassVar[Reason] = Reason.QUERY_REPEATED


@dataclass(frozen=True)
class AnswersFull(Refused):
    """The answers already in this reply reach `[limits] answer_chars`: ask again later."""

    code: ClassVar[Reason] = Reason.ANSWERS_FULL
    limit: str


@dataclass(frozen=True)
class PartsDisagree(Refused):
    """The mail's plain-text and HTML parts disagree on this command: the reader saw one of
    them (the HTML, with whatever it hides left out), the referee would read the other."""

    code: ClassVar[Reason] = Reason.PARTS_DISAGREE
    where: str  # "plain": only in the text part; "html": only in the part the reader sees


@dataclass(frozen=True)
class AttachedIgnored(Refused):
    """A command line inside a message attached to the mail: its author's, not the sender's."""

    code: ClassVar[Reason] = Reason.ATTACHED_IGNORED


@dataclass(frozen=True)
class DebateDailyLimit(Refused):
    code: ClassVar[Reason] = Reason.DEBATE_DAILY_LIMIT
    limit: int
    next: datetime  # when this player's words are relayed again


@dataclass(frozen=True)
class NotInForce(Refused):
    """The move belongs to a mechanic no rule in force carries (a repealed 212, 213, 215)."""

    code: ClassVar[Reason] = Reason.NOT_IN_FORCE
    mechanic: str


@dataclass(frozen=True)
class PlayerLeft(Refused):
    code: ClassVar[Reason] = Reason.PLAYER_LEFT
    who: str


@dataclass(frozen=True)
class AccusedNotKing(Refused):
    """213: an accusation that waited names a King who no longer reigns (deposed, or gone)."""

    code: ClassVar[Reason] = Reason.ACCUSED_NOT_KING
    accused: str


@dataclass(frozen=True)
class NoJudgeYet(Refused):
    code: ClassVar[Reason] = Reason.NO_JUDGE_YET
    id: str


@dataclass(frozen=True)
class ActionDone(Accepted):
    """An action of a rule in force ran (issue 26): what it changed, cited by the rule."""

    code: ClassVar[Done] = Done.ACTION_DONE
    action: str
    rule: str  # the rule's number now
    moved: tuple[str, ...] = ()  # "Bob 60 → 53 coins"
    announced: tuple[str, ...] = ()  # its ANNOUNCEs
    questions: tuple[str, ...] = ()  # questions for the King it opened


@dataclass(frozen=True)
class ActionOffered(Accepted):
    code: ClassVar[Done] = Done.ACTION_OFFERED
    action: str
    rule: str
    to: str  # the player's name
    number: int  # the offer's number, for ACCEPT N
    until: datetime


@dataclass(frozen=True)
class OfferAccepted(Accepted):
    code: ClassVar[Done] = Done.OFFER_ACCEPTED
    action: str
    rule: str
    number: int
    moved: tuple[str, ...] = ()


@dataclass(frozen=True)
class QuestionAnswered(Accepted):
    code: ClassVar[Done] = Done.QUESTION_ANSWERED
    number: int
    yes: bool
    rule: str
    moved: tuple[str, ...] = ()


@dataclass(frozen=True)
class ActionRefused(Refused):
    """An action, offer or answer refused (issue 26), nothing applied: `why` is the code."""

    code: ClassVar[Reason] = Reason.ACTION_REFUSED
    action: str
    rule: str  # the rule's number now that refused it; "" when none
    why: str  # require | bounds | limit | forbidden | arguments | unknown_action | ...


ACCEPTED: tuple[type[Accepted], ...] = (
    ActionDone,
    ActionOffered,
    OfferAccepted,
    QuestionAnswered,
    ProposalAccepted,
    RevisionAccepted,
    VoteRecorded,
    VoteReplaced,
    AppealOpened,
    AppealWaiting,
    AccusationOpened,
    ChampionNamed,
    RulingPublished,
    AgreementRecorded,
    Crowned,
    AwardRecorded,
    DebateExtended,
    QuitRecorded,
    ParametersConfirmed,
    ParameterSet,
    WinnerNamed,
    Status,
    Rules,
    Rule,
    History,
    Scores,
    Help,
    ArchiveSent,
    ArchiveLinked,
    JoinAsked,
    JoinConfirmSent,
    Admitted,
    AddressMoved,
    AddressConfirmSent,
    Enrolled,
    DebateRelayed,
    DeliveryChosen,
    ConfirmNeeded,
)
REFUSED: tuple[type[Refused], ...] = (
    ActionRefused,
    GameOver,
    NotActive,
    NotYourTurn,
    WrongPhase,
    AppealPending,
    NotKing,
    NotJudge,
    NotProposer,
    UnknownRule,
    AmbiguousRule,
    RuleRepealed,
    RuleImmutable,
    EnactImmutable,
    UnknownAmendment,
    EmptyText,
    TooManyMutable,
    NoMutableLeft,
    UnknownProposal,
    VoteClosed,
    DebateOver,
    NoTextToRevise,
    UnknownParameter,
    BadParameter,
    ParameterNotAllowed,
    NoParameterQuestion,
    AwardOutOfRange,
    BadDays,
    UnknownPlayer,
    UnknownAppeal,
    AppealSettled,
    NoRulingYet,
    KingCannotJudge,
    JudgeAlreadyNamed,
    KingCannotAccuse,
    NoKing,
    NotDeposed,
    CannotCrownSelf,
    VerdictNeeded,
    NoTie,
    NotInTie,
    Syntax,
    NoCommand,
    NotAuthenticated,
    TooLarge,
    NoSingleSender,
    DuplicateHeader,
    HeaderTooLong,
    TooLong,
    TooManyCommands,
    TooManyAppeals,
    TooManyMails,
    DailyLimit,
    NotAddressed,
    QuotedNotice,
    TwoAnswers,
    AlreadyPlaying,
    NameTaken,
    NameUnsafe,
    MailboxPlaying,
    LookalikeNeedsWrittenYes,
    RequestPending,
    UnknownRequest,
    AddressTaken,
    AddressOfGame,
    NotAVoter,
    JoinsFull,
    AlreadyRelayed,
    DebateTooLong,
    DebateDailyLimit,
    ArchiveDailyLimit,
    ArchiveTooLarge,
    AppealsDailyLimit,
    QueryRepeated,
    AnswersFull,
    PartsDisagree,
    AttachedIgnored,
    NotInForce,
    PlayerLeft,
    NoJudgeYet,
    AccusedNotKing,
)
PAYLOAD_OF: dict[str, type[Accepted] | type[Refused]] = {
    **{p.code.value: p for p in ACCEPTED},
    **{p.code.value: p for p in REFUSED},
}


@dataclass(frozen=True)
class Outcome:
    """The result of one command, for the sender's combined reply: its payload says which."""

    payload: Accepted | Refused

    @property
    def ok(self) -> bool:
        return isinstance(self.payload, Accepted)

    @property
    def code(self) -> str:
        """A `Done` or a `Reason` value: the name of the template macro."""
        return self.payload.code.value

    @property
    def data(self) -> dict[str, Any]:
        return self.payload.fields()
