"""Sample data the project writes itself: agent runs (:mod:`.runs`) and Claude
Code and Codex sessions (:mod:`.sessions`), seeded, for tests, benchmarks,
screenshots and ``sample_runs/``. No part of the app reads through them: they
import nothing of the package, and sit outside its layers."""
