"""The pure rules engine: state, event and time in; new state and effects out (101-215)."""
