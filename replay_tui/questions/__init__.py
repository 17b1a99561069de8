"""Questions across time: conditions on the state, when and history, two runs
side by side, rules compared."""
