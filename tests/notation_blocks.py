"""The five blocks of issue 26, exactly as written there, and the same in Italian keywords."""

from __future__ import annotations

from referee.core.check import Scope
from referee.mail.commands import REGISTRY

COINS = """COUNTER coins FOR player START 0
ON proposal.adopted: GIVE author 40 coins
"""
SPENDIES = """COUNTER spendies FOR player START 0 MIN 0
EVERY month END: FOR EACH player p: SET p.spendies = 0
EVERY month START: FOR EACH player p: GIVE p 20 spendies
"""
PICKPOCKET = """ACTION pickpocket(target player) BY player LIMIT 1 PER day:
  REQUIRE target != me AND target.coins > 50
  ROLL r = 1..10
  IF r > 7: MOVE 7 coins FROM target TO me
  ELSE: MOVE floor(me.coins / 10) coins FROM me TO game
"""
TRANSFER = """ACTION transfer(to player, x number) BY player ACCEPTED BY to WITHIN 7 DAYS:
  REQUIRE x > 0 AND me.points >= x
  MOVE x points FROM me TO to
"""
QUOTE = """COUNTER points DECIMALS 1
ON proposal.adopted:
  IF ASK king "Does the author's text quote a book, film or person, with its source?":
    GIVE author 0.1 points
"""
FIVE = (COINS, SPENDIES, PICKPOCKET, TRANSFER, QUOTE)

MONETE = """CONTATORE monete PER player INIZIO 0
QUANDO proposal.adopted: DAI author 40 monete
"""
SPICCIOLI = """CONTATORE spiccioli PER player INIZIO 0 MIN 0
OGNI month FINE: PER CIASCUN player p: IMPOSTA p.spiccioli = 0
OGNI month INIZIO: PER CIASCUN player p: DAI p 20 spiccioli
"""
BORSEGGIO = """AZIONE borseggio(target player) DI player LIMITE 1 AL day:
  RICHIEDE target != me E target.monete > 50
  LANCIA r = 1..10
  SE r > 7: SPOSTA 7 monete DA target A me
  ALTRIMENTI: SPOSTA floor(me.monete / 10) monete DA me A game
"""
CESSIONE = """AZIONE cessione(to player, x number) DI player ACCETTATA DA to ENTRO 7 GIORNI:
  RICHIEDE x > 0 E me.points >= x
  SPOSTA x points DA me A to
"""
CITAZIONE = """CONTATORE points DECIMALI 1
QUANDO proposal.adopted:
  SE CHIEDI king "Il testo dell'autore cita un libro, un film o una persona, con la fonte?":
    DAI author 0.1 points
"""
CINQUE = (MONETE, SPICCIOLI, BORSEGGIO, CESSIONE, CITAZIONE)

COMMANDS = frozenset(w.split()[0] for s in REGISTRY for w in (s.english, s.italian))
SCOPE = Scope(commands=COMMANDS)
