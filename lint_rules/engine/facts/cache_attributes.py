"""The attribute names transformers' cache classes have: `hasattr` on one of them proves nothing about
a package's own classes (see `attribute_owners`)."""

from __future__ import annotations

TRANSFORMERS_CACHE_ATTRIBUTES = frozenset(
    {
        "T_destination", "_apply", "_backward_hooks", "_backward_pre_hooks", "_buffers", "_call_impl",
        "_compiled_call_impl", "_cos_cache", "_dequantize", "_distributed_cache_data", "_dtype",
        "_forward_hooks", "_forward_hooks_always_called", "_forward_hooks_with_kwargs", "_forward_pre_hooks",
        "_forward_pre_hooks_with_kwargs", "_get_backward_hooks", "_get_backward_pre_hooks", "_get_name",
        "_is_full_backward_hook", "_key_cache", "_load_from_state_dict", "_load_state_dict_post_hooks",
        "_load_state_dict_pre_hooks", "_maybe_warn_non_full_backward_hook", "_modules", "_named_members",
        "_non_persistent_buffers_set", "_parameters", "_quantize", "_quantized_key_cache", "_quantized_keys",
        "_quantized_value_cache", "_quantized_values", "_register_load_state_dict_pre_hook",
        "_register_state_dict_hook", "_replicate_for_data_parallel", "_save_to_state_dict", "_seen_tokens",
        "_sin_cache", "_sliding_window_tensor", "_slow_forward", "_state_dict_hooks", "_state_dict_pre_hooks",
        "_value_cache", "_version", "_wrapped_call_impl", "add_module", "apply", "axis_key", "axis_value",
        "batch_repeat_interleave", "batch_select_indices", "batch_size", "batch_split", "beam_idx", "bfloat16",
        "buckets_cache", "buffers", "cache_config", "cache_processor", "call_super_init", "check_dynamic_cache",
        "children", "compile", "compute_dtype", "config", "conv_kernel_size", "conv_states", "conv_states_k",
        "conv_states_q", "conv_states_v", "cos_sin_rerotation_cache", "cpu", "crop", "cross_attention_cache",
        "cuda", "cumulative_length", "cumulative_length_int", "device", "device_key_cache",
        "device_value_cache", "double", "dtype", "dump_patches", "early_initialization", "eval", "extra_repr",
        "float", "forward", "from_batch_splits", "from_legacy_cache", "get_buffer", "get_extra_state",
        "get_mask_sizes", "get_max_cache_shape", "get_max_length", "get_parameter", "get_seq_length",
        "get_start_idx", "get_submodule", "get_usable_length", "half", "has_previous_state", "head_dim",
        "intermediate_size", "ipu", "is_compileable", "is_conv_states_initialized", "is_initialized",
        "is_recurrent_states_initialized", "is_sliding", "is_updated", "k_head_dim", "key_cache",
        "key_cache_list", "keys", "last_linear_layer", "layer_class_to_replicate", "layer_device_map",
        "layer_types", "layers", "lazy_initialization", "load_state_dict", "mamba_cache", "max_batch_size",
        "max_cache_len", "modules", "mtia", "named_buffers", "named_children", "named_modules",
        "named_parameters", "nbits", "num_heads", "num_hidden_layers", "num_key_value_heads", "num_sink_tokens",
        "offload", "offload_device", "offloading", "only_non_sliding", "optimizer", "original_device",
        "parameters", "prefetch", "prefetch_stream", "q_group_size", "qtype", "quantizer", "recurrent_states",
        "register_backward_hook", "register_buffer", "register_forward_hook", "register_forward_pre_hook",
        "register_full_backward_hook", "register_full_backward_pre_hook", "register_load_state_dict_post_hook",
        "register_load_state_dict_pre_hook", "register_module", "register_parameter",
        "register_state_dict_post_hook", "register_state_dict_pre_hook", "reorder_cache", "requires_grad_",
        "reset", "residual_length", "seen_tokens", "self_attention_cache", "set_extra_state", "set_submodule",
        "share_memory", "sliding_window", "sliding_window_size", "ssm_state_size", "ssm_states", "state_dict",
        "states_cache", "to", "to_empty", "to_legacy_cache", "train", "training", "transformer_layers", "type",
        "update", "update_conv_state", "update_recurrent_state", "v_head_dim", "value_cache",
        "value_cache_list", "values", "window_length", "xpu", "zero_grad",
    }
)  # fmt: skip
"""What transformers' cache classes and layers (and their bases) have in 5.5.3, what `torch.nn.Module`
has (4.x caches were modules), and what the 4.x caches had (`key_cache`, `_seen_tokens`, ...):
`hasattr` on one of those proves nothing (tests/test_package_receivers.py checks the installed
release's names are all here)."""
