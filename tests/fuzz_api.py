"""The whole public API against a catalogue of bad values, each call isolated in a forked child.

For every public function and method (`CASES`: a valid call of each), every argument in turn is replaced by every
value of `BAD` (NaN, ±inf, empty, ragged, wrong shape and dtype, bool, str, complex, 400-digit integers, ε = 0,
1e-300, 1e6, ∞, huge sizes, None, …), the others kept valid. Each call runs in a forked child under a time limit
and an address-space limit. A call is *handled* iff it returns a value without NaN, or raises ValueError/TypeError
whose message names the argument and repeats none of the data's values (the catalogue's arrays carry the marker
0.31415926; no message may show it). Anything else (another exception, NaN, a crash, a timeout, exhausted memory,
a message that names none of the call's arguments, or for a validator the `name` it was given) is *mishandled*; an error raised inside a callable the call
received (a user's `sample` refusing a grid value) is passed on, as it should be. (A message may name another argument: an
unusual but valid value, a tolerance of 0 say, can make the call fail because of another argument.)

    python tests/fuzz_api.py                  # the deterministic sample that `pytest tests/` runs (≤ 60 s)
    LDPBOOK_FUZZ_ALL=1 python tests/fuzz_api.py   # every call (several minutes), a summary per function
    LDPBOOK_FUZZ_ONLY=estimated. python tests/fuzz_api.py   # every call of the functions whose name starts so
"""
from __future__ import annotations

import dataclasses
import math
import os
import pickle
import random
import re
import resource
import signal
import sys
import time
import warnings
from functools import partial

import numpy as np

from ldpbook import adaptive, chernoff, closeness, egamma, estimated, foundations, sparse, spr

TIME_LIMIT = 20                  # seconds of one call (a valid call takes well under one)
MEMORY_LIMIT = 3 * 2**30         # bytes of address space of one call
MARKER = 0.31415926              # in every bad array: a message must not repeat it
NAN = float("nan")

P, Q = [0.4, 0.3, 0.2, 0.1], [0.1, 0.2, 0.3, 0.4]
RR = foundations.randomized_response(3, 1.0).tolist()
X, Y = [0.1, 0.35, 0.6, 0.8, 0.9, 0.2], [0.15, 0.5, 0.55, 0.7, 0.3, 0.05]

BAD = [  # (label, value)
    ("nan", NAN), ("inf", math.inf), ("-inf", -math.inf), ("zero", 0), ("-1", -1), ("-0.5", -0.5),
    ("1e-300", 1e-300), ("5e-324", 5e-324), ("1e6", 1e6), ("1e308", 1e308), ("10**400", 10**400),
    ("-10**400", -10**400), ("2**63", 2**63), ("10**6", 10**6), ("10**9", 10**9), ("True", True), ("None", None),
    ("str", "abc"), ("numeric str", "0.5"), ("bytes", b"x"), ("complex", 1 + 1j), ("empty list", []),
    ("empty 2-D", [[]]), ("ragged", [[MARKER], [0.2, 0.3]]), ("nan in list", [NAN, MARKER]),
    ("inf in list", [math.inf, MARKER]), ("negative list", [-MARKER, 1 + MARKER]), ("str in list", [MARKER, "a"]),
    ("bool list", [True, False]), ("complex array", np.array([MARKER, 1 - MARKER], dtype=complex)),
    ("3-D", np.full((2, 2, 2), MARKER)), ("row", np.array([[MARKER, 1 - MARKER]])), ("str array", np.array(["a", "b"])),
    ("dict", {"a": MARKER}), ("object", object()), ("function", lambda *a, **k: MARKER),
    ("big list", [MARKER] * 3 + [10**400]), ("float list", [MARKER, 1 - MARKER]),
]


def _mechanism():
    return spr.divergence_optimal(P, Q, 1.0)


def _kernel():
    return sparse.sparse_randomized_response(2, 1.0)


def _linear_free():
    return foundations.LinearFree(lambda t: t * t, name="chi2")


def _sine_test(x, y, rng):
    return closeness.dp_permutation_test(closeness.bin_samples(x, 4), closeness.bin_samples(y, 4), 1.0, k=4,
                                         n_permutations=19, rng=rng).reject


def _sine_sample(r, rng):
    return closeness.sample_sine_alternative(20, r, rng=rng), closeness.sample_sine_alternative(20, 0.0, rng=rng)


def _partitions():
    return adaptive.dyadic_partitions(np.array(X + Y), 2)


# name -> (function, positional args, keyword args): a valid call. Methods take their instance from a factory.
CASES = {
    "foundations.seed_sequence": (foundations.seed_sequence, (3,), {}),
    "foundations.as_generator": (foundations.as_generator, (3,), {}),
    "foundations.check_eps": (foundations.check_eps, (1.0,), {"name": "eps", "allow_inf": False}),
    "foundations.check_nonnegative": (foundations.check_nonnegative, ([0.5, 0.5], "a"), {}),
    "foundations.check_distribution": (foundations.check_distribution, (P,), {"name": "p", "atol": 1e-9}),
    "foundations.check_pair": (foundations.check_pair, (P, Q), {"atol": 1e-9}),
    "foundations.readonly": (foundations.readonly, (P,), {}),
    "foundations.check_channel": (foundations.check_channel, (RR,), {"name": "Q", "atol": 1e-9}),
    "foundations.check_real": (foundations.check_real, (0.5, "x"), {"low": 0.0, "high": 1.0, "open_low": True,
                                                                  "open_high": False, "allow_inf": False}),
    "foundations.check_real_array": (foundations.check_real_array, ([0.5, 1.5], "a"), {"ndim": 1, "allow_inf": False}),
    "foundations.check_int_array": (foundations.check_int_array, ([1, 2], "a"), {"ndim": 1}),
    "foundations.check_iterable": (foundations.check_iterable, ([1, 2], "a"), {}),
    "foundations.check_callable": (foundations.check_callable, (len, "f"), {}),
    "foundations.check_instance": (foundations.check_instance, (3, int, "n"), {}),
    "foundations.is_ldp": (foundations.is_ldp, (RR, 1.0), {"rtol": 1e-9}),
    "foundations.ldp_epsilon": (foundations.ldp_epsilon, (RR,), {}),
    "foundations.privacy_defect": (foundations.privacy_defect, (RR, 0.5), {}),
    "foundations.is_approx_ldp": (foundations.is_approx_ldp, (RR, 0.5, 0.1), {"atol": 1e-12}),
    "foundations.LinearFree": (foundations.LinearFree, (lambda t: t * t,), {"slope_at_inf": math.inf, "name": "c"}),
    "foundations.LinearFree.terms": ("method", _linear_free, "terms", ([0.1, -0.5],), {}),
    "foundations.check_divergence": (foundations.check_divergence, ("renyi", {"renyi_order": 2.0}), {}),
    "foundations.perspective": (foundations.perspective, (P, Q), {"kind": "kl", "check": True}),
    "foundations.divergence_from_sum": (foundations.divergence_from_sum, (0.1,), {"kind": "kl"}),
    "foundations.divergence_terms": (foundations.divergence_terms, (P, Q, [0.3, 0.1, -0.1, -0.3]), {"kind": "kl"}),
    "foundations.renyi_from_parts": (foundations.renyi_from_parts, (0.1, 0.2, 2.0), {}),
    "foundations.divergence": (foundations.divergence, (P, Q), {"kind": "renyi", "renyi_order": 2.0}),
    "foundations.check_int": (foundations.check_int, (3, "n"), {"minimum": 0}),
    "foundations.randomized_response": (foundations.randomized_response, (3, 1.0), {}),
    "foundations.privatize": (foundations.privatize, ([0, 1, 2], RR), {"rng": 1}),
    "foundations.to_json": (foundations.to_json, (_mechanism(),), {"indent": 2}),
    "foundations.from_json": (foundations.from_json, (foundations.to_json(_mechanism()),), {}),
    "foundations.load_mechanism": (foundations.load_mechanism, (foundations.to_json(_mechanism()),), {}),
    "foundations.Portable.to_json": ("method", _mechanism, "to_json", (), {"indent": 2}),
    "foundations.Portable.from_json": (spr.SPRMechanism.from_json, (foundations.to_json(_mechanism()),), {}),
    "spr.sort_by_likelihood_ratio": (spr.sort_by_likelihood_ratio, (P, Q), {}),
    "spr.block_score": (spr.block_score, ([0.7, 0.3], [0.3, 0.7], [0.4, -0.4], 1.0), {"divergence": "kl"}),
    "spr.interval_scores": (spr.interval_scores, (P, Q, 1.0), {"divergence": "kl"}),
    "spr.PartitionMechanism.sample": ("method", _mechanism, "sample", ([0, 1, 3],), {"rng": 1}),
    "spr.spr_channel": (spr.spr_channel, ([[0, 1], [2, 3]], 4, 1.0), {}),
    "spr.spr_mechanism": (spr.spr_mechanism, (P, Q, 1.0, [[0, 1], [2, 3]]), {"divergence": "kl"}),
    "spr.spr_dp": (spr.spr_dp, (P, Q, 1.0), {"divergence": "kl", "ell": 2}),
    "spr.divergence_optimal": (spr.divergence_optimal, (P, Q, 1.0), {"divergence": "renyi", "ell": 3, "renyi_order": 2.0}),
    "spr.divergence_optimal_values": (spr.divergence_optimal_values, ([P], [Q], [0.5, 1.0]), {"divergence": "kl",
                                                                                             "ell": 2}),
    "spr.kov_lp": (spr.kov_lp, (P, Q, 1.0), {"divergence": "kl"}),
    "spr.binary_mechanism": (spr.binary_mechanism, (P, Q, 1.0), {"divergence": "tv"}),
    "spr.randomized_response_mechanism": (spr.randomized_response_mechanism, (P, Q, 1.0), {"divergence": "kl"}),
    "spr.joint_range": (spr.joint_range, (P, Q, 1.0), {"ell": 2, "max_points": 200}),
    "egamma.neyman_pearson_curve": (egamma.neyman_pearson_curve, (P, Q), {}),
    "egamma.egamma_closed_form": (egamma.egamma_closed_form, (0.3, 1.0), {"gamma": 2.0}),
    "egamma.binary_rr_channel": (egamma.binary_rr_channel, ([True, False, True], 1.0), {}),
    "egamma.egamma_optimal": (egamma.egamma_optimal, (P, Q, 1.0), {"gamma": 2.0}),
    "egamma.egamma_lp": (egamma.egamma_lp, (P, Q, 1.0), {"gamma": 2.0}),
    "egamma.PrivatizedROC.tpr_at": ("method", lambda: egamma.privatized_roc(P, Q, 1.0), "tpr_at", (0.3,),
                                    {"curve": "private"}),
    "egamma.privatized_roc": (egamma.privatized_roc, (P, Q, 1.0), {"gammas": [0.5, 2.0]}),
    "egamma.lr_distance": (egamma.lr_distance, (P, Q, np.eye(4)), {"r": 2.0}),
    "egamma.lr_distance_optimal": (egamma.lr_distance_optimal, (P, Q, 1.0), {"r": 2.0}),
    "sparse.SparseKernelMechanism.from_arrays": (sparse.SparseKernelMechanism.from_arrays, (np.ones((3, 3)),),
                                                 {"log_kernel": False, "name": "flat"}),
    "sparse.SparseKernelMechanism.pmf": ("method", _kernel, "pmf", (3,), {}),
    "sparse.SparseKernelMechanism.sample": ("method", _kernel, "sample", (3,), {"rng": 1, "size": 4}),
    "sparse.SparseKernelMechanism.defect": ("method", _kernel, "defect", (0, 1, 1.0), {}),
    "sparse.SparseKernelMechanism.channel": ("method", _kernel, "channel", ([0, 1, 2],), {}),
    "sparse.SparseKernelMechanism.pure_epsilon": ("method", _kernel, "pure_epsilon", ([0, 1, 2],), {}),
    "sparse.SparseKernelMechanism.is_pure_ldp": ("method", _kernel, "is_pure_ldp", (1.0, [0, 1, 2]), {"rtol": 1e-9}),
    "sparse.first_distance_moment": (sparse.first_distance_moment, (_kernel(), 0), {}),
    "sparse.range_defect": (sparse.range_defect, (_kernel(), 1.0, 2), {"center": 0}),
    "sparse.sweep_radius": (sparse.sweep_radius, (partial(sparse.truncated_skellam, 2.0), [1, 2], 1.0, 2),
                            {"center": 0}),
    "sparse.graph_distances": (sparse.graph_distances, (np.eye(3, k=1) + np.eye(3, k=-1),), {}),
    "sparse.graph_ball_supports": (sparse.graph_ball_supports, (np.eye(3, k=1) + np.eye(3, k=-1), 1), {}),
    "sparse.sparse_exponential": (sparse.sparse_exponential, (-np.abs(np.subtract.outer(range(3), range(3))), 1.0, 1),
                                  {}),
    "sparse.shell_ratio_epsilon": (sparse.shell_ratio_epsilon, ([1.0, 0.5, 0.25], 2), {}),
    "sparse.sparse_staircase": (sparse.sparse_staircase, ([1.0, 0.5], np.eye(4, k=1) + np.eye(4, k=-1), 1), {}),
    "sparse.sparse_rr_calibration": (sparse.sparse_rr_calibration, (2, 1.0), {}),
    "sparse.sparse_randomized_response": (sparse.sparse_randomized_response, (2, 1.0), {}),
    "sparse.sparse_rr_defect": (sparse.sparse_rr_defect, (0, 1, [0, 1], [1, 2], 0.6, 0.4, 1.0), {}),
    "sparse.sparse_rr_line_defect": (sparse.sparse_rr_line_defect, (1, 2, 1.0), {}),
    "sparse.sparse_rr_r1": (sparse.sparse_rr_r1, (2, 1.0), {}),
    "sparse.truncated_additive": (sparse.truncated_additive, ([0.25, 0.5, 0.25], 1), {}),
    "sparse.truncated_additive_defect": (sparse.truncated_additive_defect, ([0.25, 0.5, 0.25], 1, 1.0, 1), {}),
    "sparse.skellam_pmf": (sparse.skellam_pmf, ([0, 1, -2], 2.0), {}),
    "sparse.skellam_logpmf": (sparse.skellam_logpmf, ([0, 1, -2], 2.0), {}),
    "sparse.skellam_sf": (sparse.skellam_sf, ([0, 1, -2], 2.0), {}),
    "sparse.skellam_cdf": (sparse.skellam_cdf, ([0, 1, -2], 2.0), {}),
    "sparse.truncated_skellam_normalizer": (sparse.truncated_skellam_normalizer, (2.0, 3), {}),
    "sparse.truncated_skellam_leakage": (sparse.truncated_skellam_leakage, (2.0, 3, 1), {}),
    "sparse.skellam_privacy_loss": (sparse.skellam_privacy_loss, ([0, 1, 2], 1, 2.0), {}),
    "sparse.truncated_skellam_defect": (sparse.truncated_skellam_defect, (2.0, 3, 1.0, 1), {}),
    "sparse.truncated_skellam": (sparse.truncated_skellam, (2.0, 3), {}),
    "sparse.poisson_binomial_pmf": (sparse.poisson_binomial_pmf, ([[0.2, 0.5], [0.5, 0.7]],), {}),
    "sparse.poisson_binomial": (sparse.poisson_binomial, ([[0.2, 0.5], [0.5, 0.7]],), {"support": 2}),
    "closeness.minimax_separation": (closeness.minimax_separation, (1000, 1.0, 1.0, 1), {}),
    "closeness.sample_complexity": (closeness.sample_complexity, (0.1, 1.0, 1.0, 1), {}),
    "closeness.phase_exponents": (closeness.phase_exponents, (0.5, 1.0, 1), {}),
    "closeness.occupied_cell_counts": (closeness.occupied_cell_counts, ([0, 1, 1, 3], [1, 2, 3, 3]), {}),
    "closeness.split_statistic": (closeness.split_statistic, ([0, 1, 1, 3], [1, 2, 3, 3]), {"k": 4, "rng": 1}),
    "closeness.laplace_scale": (closeness.laplace_scale, (2.0, 1.0), {}),
    "closeness.noisy_permutation_pvalue": (closeness.noisy_permutation_pvalue, (1.0, [0.5] * 19, 1.0),
                                           {"sensitivity": 1.0, "rng": 1}),
    "closeness.smallest_n_permutations": (closeness.smallest_n_permutations, (0.05,), {}),
    "closeness.dp_permutation_decision": (closeness.dp_permutation_decision, (1.0, [0.5] * 19, 1.0),
                                          {"sensitivity": 1.0, "alpha": 0.05, "rng": 1}),
    "closeness.rb_statistic": (closeness.rb_statistic, ([0, 1, 1, 3], [1, 2, 3, 3]), {"k": 4}),
    "closeness.rb_cell_values": (closeness.rb_cell_values, (np.array([1, 2]), np.array([0, 1]), 4, 4), {}),
    "closeness.permutation_statistics": (closeness.permutation_statistics, ([0, 1, 1, 3], [1, 2, 3, 3]),
                                         {"k": 4, "statistic_name": "rb", "n_permutations": 19, "rng": 1}),
    "closeness.dp_permutation_test": (closeness.dp_permutation_test, ([0, 1, 1, 3], [1, 2, 3, 3], 1.0),
                                      {"k": 4, "statistic_name": "rb", "n_permutations": 19, "alpha": 0.05, "rng": 1}),
    "closeness.bin_samples": (closeness.bin_samples, (X, 4), {}),
    "closeness.binned_rate_terms": (closeness.binned_rate_terms, (4, 1000, 1.0, 1.0, 1), {}),
    "closeness.one_repetition": (closeness.one_repetition, (_sine_test, _sine_sample, 0.2, 5, (), 0, 0), {}),
    "closeness.power_curve": (closeness.power_curve, (_sine_test, _sine_sample, [0.0, 0.3]), {"n_reps": 2, "rng": 1}),
    "closeness.sample_sine_alternative": (closeness.sample_sine_alternative, (10, 0.3), {"rng": 1}),
    "adaptive.dyadic_max_level": (adaptive.dyadic_max_level, (100,), {}),
    "adaptive.alternating_density": (adaptive.alternating_density, (X, 2, 0.3), {}),
    "adaptive.alternating_cell_masses": (adaptive.alternating_cell_masses, (2, 0.3, 4), {}),
    "adaptive.sample_alternating": (adaptive.sample_alternating, (10, 2, 0.3), {"rng": 1}),
    "adaptive.dyadic_partitions": (adaptive.dyadic_partitions, (X + Y, 2), {}),
    "adaptive.multiscale_statistics": (adaptive.multiscale_statistics, (_partitions(), [[True] * 6 + [False] * 6], 6, 6),
                                       {}),
    "adaptive.centering_offsets": (adaptive.centering_offsets, (np.arange(12.0).reshape(3, 4),), {"level": 0.2}),
    "adaptive.adaptive_scores": (adaptive.adaptive_scores, (np.arange(6.0).reshape(3, 2), [0.5, 1.0, 1.5]), {}),
    "adaptive.adaptive_test": (adaptive.adaptive_test, (X, Y, 1.0), {"alpha": 0.1, "n_centering": 9,
                                                                     "n_permutations": 19, "rng": 1}),
    "adaptive.adaptive_rate_bound": (adaptive.adaptive_rate_bound, (4, 1000, 1.0, 1.0, 1), {}),
    "adaptive.adaptive_rate": (adaptive.adaptive_rate, (1000, 1.0, 1.0, 1), {}),
    "chernoff.chernoff_information": (chernoff.chernoff_information, (P, Q), {}),
    "chernoff.log_ratio_range": (chernoff.log_ratio_range, (P, Q, 1.0), {}),
    "chernoff.interval_upper_bound": (chernoff.interval_upper_bound, (0.2, 0.8, 0.1, 0.12, 1.0, 1.0), {}),
    "chernoff.spr_chernoff_information": (chernoff.spr_chernoff_information, (P, Q, 1.0, [[0, 1], [2, 3]]), {}),
    "chernoff.chernoff_optimal": (chernoff.chernoff_optimal, (P, Q, 1.0), {"ell": 3, "tol": 1e-8,
                                                                           "max_dp_calls": 200}),
    "chernoff.bayes_error": (chernoff.bayes_error, (P, Q, 5), {"reps": 100, "rng": 1}),
    "estimated.divergence_constants": (estimated.divergence_constants, (1.0,), {"divergence": "kl"}),
    "estimated.output_lipschitz": (estimated.output_lipschitz, (1.0,), {"divergence": "kl"}),
    "estimated.l1_radius": (estimated.l1_radius, (100, 4, 0.05), {}),
    "estimated.plugin_optimal": (estimated.plugin_optimal, ([0, 1, 1, 2, 3, 0], [3, 2, 2, 1, 3, 3], 1.0),
                                 {"k": 4, "divergence": "kl", "confidence": 0.9, "ell": 2}),
    "estimated.np_power": (estimated.np_power, (np.array([0.1, 0.5, 0.9]), np.array([0.5, 0.3, 0.2]),
                                                np.array([0.2, 0.3, 0.5]), 0.1), {}),
    "estimated.sample_size_details": (estimated.sample_size_details, (P, Q, 1.0), {"alpha": 0.05, "beta": 0.2}),
    "estimated.sample_size": (estimated.sample_size, (P, Q, 1.0), {"alpha": 0.05, "beta": 0.2}),
    "figures.figure1_data": (spr.figure1_data, (3,), {"T": 2, "eps": [1.0], "n_boot": 10, "seed": 0, "boot_seed": 1}),
    "figures.figure5_data": (spr.figure5_data, (P, Q, (1.0,)), {"n": 200, "seed": 1}),
    "figures.table_one": (sparse.table_one, ([1, 2],), {"eps": 1.0, "H": 2, "mu": 2.0}),
    "figures.figure2": (closeness.figure2, (), {"n_reps": 2, "r_values": (0.0,), "eps_values": (1.0,), "n": 20,
                                                "kappa": 4, "n_permutations": 19, "alpha": 0.05, "rng": 1}),
    "figures.chernoff_figure_data": (chernoff.chernoff_figure_data, (3,), {"T": 1, "eps": [1.0], "seed": 0,
                                                                          "tol": 1e-8}),
}


def calls():
    "Every (case name, argument name, bad label): the argument is a position (int) or a keyword (str)."
    out = []
    for name, case in CASES.items():
        args, kwargs = case[-2], case[-1]
        for slot in [*range(len(args)), *kwargs]:
            for label, _ in BAD:
                out.append((name, slot, label))
    return out


def _param_name(name, slot):
    "The name of argument `slot` of case `name` (a position mapped through the signature)."
    import inspect
    case = CASES[name]
    if isinstance(slot, str):
        return slot
    func = getattr(case[1](), case[2]) if case[0] == "method" else case[0]
    return list(inspect.signature(func).parameters)[slot]          # bound methods: without self or cls


def _raised_by_user_code(err):
    "Whether the exception passed through a callable of this file that the call received (a `test`, `sample`…)."
    frames = []
    tb = err.__traceback__
    while tb is not None:
        frames.append(tb.tb_frame)
        tb = tb.tb_next
    return any(f.f_code.co_filename == __file__ and f.f_code.co_name != "_run_in_child" for f in frames)


def _param_names(func):
    "The names of a callable's parameters (a value refused because of another argument names that one)."
    import inspect
    try:
        return list(inspect.signature(func).parameters)
    except (TypeError, ValueError):
        return []


def _has_nan(value, depth=0):
    "Whether a returned value holds a NaN anywhere (arrays, numbers, tuples, lists, dicts, dataclass fields)."
    if depth > 4:
        return False
    if isinstance(value, (float, np.floating)):
        return bool(np.isnan(value))
    if isinstance(value, np.ndarray):
        return value.dtype.kind in "fc" and bool(np.isnan(value).any())
    if isinstance(value, (list, tuple)):
        return any(_has_nan(v, depth + 1) for v in value[:1000])
    if isinstance(value, dict):
        return any(_has_nan(v, depth + 1) for v in value.values())
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return any(_has_nan(getattr(value, f.name), depth + 1) for f in dataclasses.fields(value))
    return False


def _run_in_child(name, slot, label):
    "The outcome of one call: ('ok' | 'error' | 'bad', detail)."
    case, bad = CASES[name], dict(BAD)[label]
    if case[0] == "method":
        func, args, kwargs = getattr(case[1](), case[2]), list(case[3]), dict(case[4])
    else:
        func, args, kwargs = case[0], list(case[1]), dict(case[2])
    if isinstance(slot, str):
        kwargs[slot] = bad
    else:
        args[slot] = bad
    argument = _param_name(name, slot)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            result = func(*args, **kwargs)
        except (ValueError, TypeError) as err:
            if _raised_by_user_code(err):                    # a user's callable refused the value: passed on as is
                return "error", f"{type(err).__name__} from a user-supplied callable"
            message = str(err)
            if str(MARKER)[2:8] in message:
                return "bad", f"message repeats the data: {message[:160]}"
            names = _param_names(func)
            given_names = [v for k, v in kwargs.items() if k == "name" and isinstance(v, str)] + \
                [v for i, v in enumerate(args) if i < len(names) and names[i] == "name" and isinstance(v, str)]
            if not any(re.search(rf"(?<![A-Za-z0-9_]){re.escape(n)}(?![A-Za-z0-9_])", message)
                       for n in [argument, *_param_names(func), *given_names]):
                return "bad", f"message does not name {argument!r}: {type(err).__name__}: {message[:160]}"
            return "error", type(err).__name__
        except MemoryError:
            return "bad", "MemoryError"
        except Exception as err:  # noqa: BLE001 - any other exception is what the harness counts
            return "bad", f"{type(err).__name__}: {str(err)[:160]}"
    if _has_nan(result):
        return "bad", "returned NaN"
    return "ok", type(result).__name__


def run_one(name, slot, label):
    "Run one call in a forked child with time and memory limits; its outcome."
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:                                          # the child
        os.close(read)
        quiet = os.open(os.devnull, os.O_WRONLY)         # no progress bars or prints from the call
        os.dup2(quiet, 1)
        os.dup2(quiet, 2)
        try:
            resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
            signal.signal(signal.SIGALRM, signal.SIG_DFL)
            signal.alarm(TIME_LIMIT)
            outcome = _run_in_child(name, slot, label)
        except BaseException as err:  # noqa: BLE001
            outcome = ("bad", f"{type(err).__name__} in the harness child")
        with os.fdopen(write, "wb") as pipe:
            pipe.write(pickle.dumps(outcome))
        os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        data = pipe.read()
    _, status = os.waitpid(pid, 0)
    if data:
        return pickle.loads(data)
    if os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGALRM:
        return "bad", f"no answer within {TIME_LIMIT} s"
    return "bad", f"child died (status {status}): memory limit or crash"


def key(name, slot, label):
    "A call's key: function, argument (position or keyword) and bad value."
    return f"{name} | {slot} | {label}"


def sample(budget_calls, seed=0):
    "A deterministic sample: every function's valid call plus `budget_calls` bad calls drawn with `seed`."
    everything = calls()
    rng = random.Random(seed)
    return rng.sample(everything, min(budget_calls, len(everything)))


def run(selection, progress=False):
    "Outcomes of the calls in `selection`: a list of (name, slot, label, kind, detail)."
    out = []
    for i, (name, slot, label) in enumerate(selection):
        kind, detail = run_one(name, slot, label)
        out.append((name, slot, label, kind, detail))
        if progress and (i + 1) % 500 == 0:
            print(f"  {i + 1}/{len(selection)} calls", file=sys.stderr, flush=True)
    return out


def main():
    full = os.environ.get("LDPBOOK_FUZZ_ALL") == "1"
    only = os.environ.get("LDPBOOK_FUZZ_ONLY")
    if only:                                          # one module (or function): all of its calls
        selection = [c for c in calls() if c[0].startswith(only)]
    else:
        selection = calls() if full else sample(int(os.environ.get("LDPBOOK_FUZZ_CALLS", "600")))
    start = time.time()
    results = run(selection, progress=True)
    bad = [r for r in results if r[3] == "bad"]
    by_function = {}
    for name, slot, label, _, detail in bad:
        by_function.setdefault(name, []).append((slot, label, detail))
    for name, items in sorted(by_function.items()):
        print(f"{name}: {len(items)} mishandled")
        for slot, label, detail in items[:6]:
            print(f"    {_param_name(name, slot)} = {label}: {detail}")
    if os.environ.get("LDPBOOK_FUZZ_WRITE"):           # the list of mishandled calls, one key per line
        with open(os.environ["LDPBOOK_FUZZ_WRITE"], "w") as out:
            out.writelines(f"{key(name, slot, label)}\n" for name, slot, label, _, _ in sorted(bad, key=str))
    print(f"{len(CASES)} functions, {len(results)} calls, {len(bad)} mishandled "
          f"({only or ('all' if full else 'sample')}; {time.time() - start:.0f} s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
