"""The mail edge: parsing inbound mail, commands, rendering replies and notices (107, 205)."""
