import { type FormEvent, useState } from 'react';
import { api } from './api.js';
import {
  type Checked,
  checkApnsKey,
  checkFcmServiceAccount,
  checkFileSize,
  fieldError,
  keyIdFromFileName,
} from './push.js';

/** A picked file's text, its size and content checked; an error names `field`. */
async function readChecked<T>(
  field: string,
  file: File | undefined,
  check: (text: string) => Checked<T>,
): Promise<Checked<T>> {
  if (!file) return { ok: false, error: `${field}: choose a file.` };
  const tooBig = checkFileSize(field, file.size);
  if (tooBig) return { ok: false, error: tooBig };
  return check(await file.text());
}

/** Uploads a Firebase service-account key file (`POST /v1/push/fcm`). */
export function FcmForm({ onSaved }: { onSaved: () => Promise<void> }) {
  const [error, setError] = useState('');
  const [note, setNote] = useState('');
  const submit = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const form = e.currentTarget;
    setError('');
    setNote('');
    const file = (form.elements.namedItem('service_account') as HTMLInputElement).files?.[0];
    const checked = await readChecked('Service account file', file, checkFcmServiceAccount);
    if (!checked.ok) {
      setError(checked.error);
      return;
    }
    try {
      await api('POST', '/v1/push/fcm', { service_account: checked.value });
      form.reset();
      setNote('Service account saved; its private key is sealed.');
      await onSaved();
    } catch (err) {
      setError(fieldError(err, { service_account: 'Service account file' }));
    }
  };
  return (
    <form onSubmit={submit} aria-label="Upload FCM service account">
      <label>
        Service account file (JSON)
        <input name="service_account" type="file" accept=".json,application/json" required />
      </label>
      <button type="submit">Upload FCM service account</button>
      {note && <p role="status">{note}</p>}
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
    </form>
  );
}

const APNS_LABELS = {
  key_pem: 'Key file (.p8)',
  key_id: 'Key id',
  team_id: 'Team id',
  topic: 'Topic (bundle id)',
  sandbox: 'Sandbox',
};

/** Uploads an APNs token key (.p8) with its ids (`POST /v1/push/apns`). */
export function ApnsForm({ onSaved }: { onSaved: () => Promise<void> }) {
  const [keyId, setKeyId] = useState('');
  const [error, setError] = useState('');
  const [note, setNote] = useState('');
  const submit = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const form = e.currentTarget;
    setError('');
    setNote('');
    const f = new FormData(form);
    const file = (form.elements.namedItem('key_pem') as HTMLInputElement).files?.[0];
    const checked = await readChecked(APNS_LABELS.key_pem, file, checkApnsKey);
    if (!checked.ok) {
      setError(checked.error);
      return;
    }
    try {
      await api('POST', '/v1/push/apns', {
        key_pem: checked.value,
        key_id: keyId.trim(),
        team_id: String(f.get('team_id') ?? '').trim(),
        topic: String(f.get('topic') ?? '').trim(),
        sandbox: f.get('sandbox') === 'on',
      });
      form.reset();
      setKeyId('');
      setNote('APNs key saved; it is sealed.');
      await onSaved();
    } catch (err) {
      setError(fieldError(err, APNS_LABELS));
    }
  };
  return (
    <form onSubmit={submit} aria-label="Upload APNs key">
      <label>
        {APNS_LABELS.key_pem}
        <input
          name="key_pem"
          type="file"
          accept=".p8"
          required
          onChange={(e) => {
            const id = keyIdFromFileName(e.target.files?.[0]?.name ?? '');
            if (id && !keyId) setKeyId(id);
          }}
        />
      </label>
      <div className="inline">
        <label>
          {APNS_LABELS.key_id}
          <input
            name="key_id"
            value={keyId}
            onChange={(e) => setKeyId(e.target.value)}
            placeholder="ABC123DEFG"
            autoComplete="off"
            required
          />
        </label>
        <label>
          {APNS_LABELS.team_id}
          <input name="team_id" placeholder="DEF123GHIJ" autoComplete="off" required />
        </label>
        <label>
          {APNS_LABELS.topic}
          <input name="topic" placeholder="com.example.app" autoComplete="off" required />
        </label>
        <label>
          <input name="sandbox" type="checkbox" /> {APNS_LABELS.sandbox} (development builds)
        </label>
      </div>
      <button type="submit">Upload APNs key</button>
      {note && <p role="status">{note}</p>}
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
    </form>
  );
}
