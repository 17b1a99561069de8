"""What the forward pass notes of each line for the app, a few bytes a line:
which call it is part of (:mod:`.calls`), its parent and the lines naming it
(:mod:`.causes`), and when it happened (:mod:`.clock`)."""
