"""Fix plans: how each source call can be fixed (guard, hoist, device rewrite) and how safely."""
