"""The Gymnasium environments (registered by ``import nas_envs``)."""
