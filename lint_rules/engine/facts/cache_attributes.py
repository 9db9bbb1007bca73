"""The attribute names transformers' cache classes have: `hasattr` on one of them proves nothing about
a package's own classes (see `attribute_owners`)."""

from __future__ import annotations

TRANSFORMERS_CACHE_ATTRIBUTES = frozenset(
    {
        "T_destination", "_allocate_key_value_buffers", "_apply", "_apply_key_rotary_pos_emb",
        "_apply_pending_reorder", "_backward_hooks", "_backward_pre_hooks", "_buffers", "_call_impl",
        "_compiled_call_impl", "_cos_cache", "_create_key_value_cache_tensors", "_dequantize", "_device_key_cache",
        "_device_value_cache", "_distributed_cache_data", "_dtype", "_ensure_layer_on_device",
        "_evict_previous_layer", "_forward_hooks", "_forward_hooks_always_called", "_forward_hooks_with_kwargs",
        "_forward_pre_hooks", "_forward_pre_hooks_with_kwargs", "_get_backward_hooks", "_get_backward_pre_hooks",
        "_get_name", "_get_rerotation_cos_sin", "_is_croppable", "_is_full_backward_hook",
        "_is_quantized_length_zero", "_key_cache", "_layer_type", "_load_from_state_dict",
        "_load_state_dict_post_hooks", "_load_state_dict_pre_hooks", "_maybe_warn_non_full_backward_hook",
        "_modules", "_named_members", "_non_persistent_buffers_set", "_parameters", "_pending_beam_idx",
        "_prefetch_layer", "_prefetch_layer_in_context", "_prefetch_next_layer", "_prefetch_stream",
        "_previous_number_of_accepted_tokens", "_quantize", "_quantized_key_cache", "_quantized_keys",
        "_quantized_value_cache", "_quantized_values", "_read", "_register_load_state_dict_pre_hook",
        "_register_state_dict_hook", "_replicate_for_data_parallel", "_rotate_half", "_save_to_state_dict",
        "_seen_tokens", "_sin_cache", "_sliding_update", "_sliding_window_tensor", "_slow_forward",
        "_state_dict_hooks", "_state_dict_pre_hooks", "_static_update", "_value_cache", "_version",
        "_wrapped_call_impl", "activate_past_recording", "active_device_layer", "add_module", "all_keys",
        "all_values", "append_new_layers", "apply", "axis_key", "axis_value", "backend", "batch_repeat_interleave",
        "batch_select_indices", "batch_size", "batch_split", "beam_idx", "bfloat16", "buckets_cache", "buffers",
        "cache_config", "cache_implementation", "cache_processor", "cache_type", "call_super_init",
        "check_dynamic_cache", "children", "compile", "compute_dtype", "config", "conv_L_cache", "conv_cache",
        "conv_kernel_size", "conv_states", "conv_states_k", "conv_states_q", "conv_states_v", "cos_sin_cache",
        "cos_sin_rerotation_cache", "cpu", "crop", "cross_attention_cache", "cuda", "cumulative_length",
        "cumulative_length_int", "cumulative_length_linear", "device", "device_key_cache", "device_value_cache",
        "double", "dtype", "dump_patches", "early_initialization", "erased_length", "eval", "evict_previous_layer",
        "extra_repr", "first_attention_layer", "float", "forward", "fp8_dtype", "fp8_max", "from_batch_splits",
        "from_dict", "from_legacy_cache", "from_tensors", "get_buffer", "get_conv_state", "get_extra_state",
        "get_mask_sizes", "get_max_cache_shape", "get_max_length", "get_parameter", "get_query_offset",
        "get_recurrent_state", "get_recurrent_states_to_keep", "get_seq_length", "get_start_idx", "get_submodule",
        "get_usable_length", "half", "has_previous_state", "head_dim", "increase_count",
        "indexer_cumulative_length", "indexer_device", "indexer_dtype", "indexer_keys", "indexer_position_ids",
        "initialise_cache_layer", "intermediate_size", "ipu", "is_compileable", "is_conv_states_initialized",
        "is_croppable", "is_dummy", "is_indexer_initialized", "is_initialized", "is_linear", "is_recording_past",
        "is_recurrent_states_initialized", "is_sliding", "is_static", "is_updated", "k_head_dim", "key_cache",
        "key_cache_list", "keys", "last_conv_layer", "last_linear_layer", "layer", "layer_class_to_replicate",
        "layer_classes", "layer_device_map", "layer_init_kwargs", "layer_type", "layer_types", "layers",
        "layers_block_type", "lazy_initialization", "lazy_initialization_indexer", "load_state_dict", "mamba_cache",
        "max_batch_size", "max_cache_len", "modules", "mtia", "n_mamba_heads", "named_buffers", "named_children",
        "named_modules", "named_parameters", "nbits", "num_heads", "num_hidden_layers", "num_key_value_heads",
        "num_sink_tokens", "number_of_states", "offload", "offload_device", "offloading", "only_non_sliding",
        "optimizer", "original_device", "parameters", "post_update", "pre_update", "prefetch", "prefetch_layer",
        "prefetch_stream", "prefill_cumulative_length", "prefill_keys", "prefill_length", "prefill_max_cache_len",
        "prefill_values", "q_group_size", "qtype", "quantizer", "record_past", "recurrent_states",
        "recurrent_states_history", "recurrent_states_to_keep", "register_backward_hook", "register_buffer",
        "register_forward_hook", "register_forward_pre_hook", "register_full_backward_hook",
        "register_full_backward_pre_hook", "register_load_state_dict_post_hook",
        "register_load_state_dict_pre_hook", "register_module", "register_parameter",
        "register_state_dict_post_hook", "register_state_dict_pre_hook", "reorder_cache", "requires_grad_", "reset",
        "residual_length", "seen_tokens", "self_attention_cache", "seqlen_offset", "set_extra_state",
        "set_prefill_length", "set_previous_accepted_tokens", "set_submodule", "share_memory", "sliding_window",
        "sliding_window_len", "sliding_window_size", "ssm_state_size", "ssm_states", "state_dict", "states_cache",
        "supports_early_init", "to", "to_dict", "to_empty", "to_json_file", "to_json_string", "to_legacy_cache",
        "train", "training", "transformer_layers", "type", "update", "update_conv_state", "update_indexer",
        "update_recurrent_state", "update_ssm_state", "v_head_dim", "validate", "value_cache", "value_cache_list",
        "values", "window_length", "xpu", "zero_grad",
    }
)  # fmt: skip
"""What transformers' cache classes and layers (and their bases) have in any release of the table
(`releases.RELEASES`: 5.2x's `get_query_offset`, 4.x's `key_cache` and `_seen_tokens`, ...) and what
`torch.nn.Module` has (4.x caches were modules): `hasattr` on one of those proves nothing
(tests/test_release_table.py reads each release's sources for them)."""
