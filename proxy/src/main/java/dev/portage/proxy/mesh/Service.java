package dev.portage.proxy.mesh;

import java.util.concurrent.CompletableFuture;

/**
 * One step of the sidecar's request stack, tower-style: a layer wraps the next service and does one
 * job (route, timeout, retry, split, fail-fast, balance, dispatch). The returned future completes
 * when the response head is known; its body streams afterwards. Failures that become an HTTP answer
 * are {@link ProxyException}s. Services may be called from any thread.
 */
@FunctionalInterface
interface Service {

  CompletableFuture<ProxyResponse> call(ProxyRequest request);
}
