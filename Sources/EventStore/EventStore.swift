// The EventStore module.
