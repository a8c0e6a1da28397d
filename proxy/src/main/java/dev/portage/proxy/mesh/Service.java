package dev.portage.proxy.mesh;

/**
 * One step of the sidecar's request stack, tower-style: a layer wraps the next service and does one
 * job (route, timeout, retry, split, fail-fast, balance, dispatch). A call hands the request on and
 * returns; its {@link Reply} hears once the response head is known (its body streams afterwards) or
 * the request failed. Failures that become an HTTP answer are {@link ProxyException}s. Services may
 * be called from any thread.
 *
 * <p>A callback rather than a future per call: on the usual path (no timeout, no retry) no layer
 * needs to see the answer go by, and a future with a dependent stage per request was a measurable
 * share of the sidecar's CPU per request.
 */
@FunctionalInterface
interface Service {

  /** Sends {@code request} on; {@code reply} hears exactly once how it went, on any thread. */
  void call(ProxyRequest request, Reply reply);
}
