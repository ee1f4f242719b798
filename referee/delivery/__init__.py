"""Delivery: the outbox's rows taken, handed to a postman, and their fate recorded (205)."""
