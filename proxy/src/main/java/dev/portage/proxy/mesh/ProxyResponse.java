package dev.portage.proxy.mesh;

import io.netty.handler.codec.http.HttpResponse;

/**
 * A response head from an endpoint and its body, still to be read.
 *
 * @param head status and headers as received (hop-by-hop headers not yet stripped)
 * @param body must be piped or discarded exactly once
 */
record ProxyResponse(HttpResponse head, ResponseBody body) {}
