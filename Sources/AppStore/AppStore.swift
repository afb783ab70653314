// The AppStore module; see ARCHITECTURE §2.
