// The AppleSimulator module; see ARCHITECTURE §2.
