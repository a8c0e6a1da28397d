package dev.portage.core.testing;

import dev.portage.core.testing.MockApiServerExtension;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.NamespacedKubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Gives a test class a CRUD-mode mock Kubernetes API server and a client for it, in the fields the
 * class declares with the types {@link KubernetesMockServer} and {@link KubernetesClient}: static
 * fields get one server for the whole class, instance fields a new one per test. Use it with
 * {@code @ExtendWith(MockApiServerExtension.class)} where fabric8's {@code
 * @ExtendWith(MockApiServerExtension.class)} would go; unlike that one it closes the client before the
 * server (so no watch is open while the server closes) and starts and stops the server through
 * {@link MockApiServers}, which a busy machine cannot turn into a failed test.
 */
public final class MockApiServerExtension
    implements BeforeAllCallback, AfterAllCallback, BeforeEachCallback, AfterEachCallback {

  private Running perClass;
  private Running perTest;

  @Override
  public void beforeAll(ExtensionContext context) throws IllegalAccessException {
    List<Field> fields = fields(context.getRequiredTestClass(), true);
    if (!fields.isEmpty()) {
      perClass = Running.start();
      perClass.inject(fields, null);
    }
  }

  @Override
  public void beforeEach(ExtensionContext context) throws IllegalAccessException {
    Object instance = context.getRequiredTestInstance();
    List<Field> fields = fields(instance.getClass(), false);
    if (!fields.isEmpty()) {
      perTest = Running.start();
      perTest.inject(fields, instance);
    }
  }

  @Override
  public void afterEach(ExtensionContext context) {
    if (perTest != null) {
      perTest.close();
      perTest = null;
    }
  }

  @Override
  public void afterAll(ExtensionContext context) {
    if (perClass != null) {
      perClass.close();
      perClass = null;
    }
  }

  private static List<Field> fields(Class<?> type, boolean statics) {
    List<Field> found = new ArrayList<>();
    for (Class<?> c = type; c != null && c != Object.class; c = c.getSuperclass()) {
      for (Field f : c.getDeclaredFields()) {
        boolean ours = f.getType() == KubernetesMockServer.class || f.getType() == KubernetesClient.class
            || f.getType() == NamespacedKubernetesClient.class;
        if (ours && Modifier.isStatic(f.getModifiers()) == statics) {
          found.add(f);
        }
      }
    }
    return found;
  }

  /** One started server and its client. */
  private record Running(KubernetesMockServer server, NamespacedKubernetesClient client) {

    static Running start() {
      KubernetesMockServer server = MockApiServers.startCrud();
      return new Running(server, server.createClient());
    }

    void inject(List<Field> fields, Object instance) throws IllegalAccessException {
      for (Field f : fields) {
        f.setAccessible(true);
        f.set(instance, f.getType() == KubernetesMockServer.class ? server : client);
      }
    }

    void close() {
      try {
        client.close();
      } finally {
        MockApiServers.destroy(server);
      }
    }
  }
}
