"""What tests share: driving the app as a person would."""
