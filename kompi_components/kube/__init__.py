"""Reading and acting on a live cluster through its API server (the parts the Pulumi program itself needs)."""
